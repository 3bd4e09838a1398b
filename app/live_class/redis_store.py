"""The class store in Redis (`CHAINRULE_REDIS_URL`): every worker and replica serves every class.

Keys (all expire with the class, `ttl_s` after the teacher's last write):
- `chainrule:class:<code>` — a hash of the class's fields (store.py), written by small Lua
  scripts, so a write and its version bump, or an answer and the check that its question is
  open, happen at once whatever the other workers do;
- `chainrule:class:<code>:answers:<question>` — a hash, student id → answer record;
- `chainrule:class:<code>:present` — a sorted set, student id → until when they count as
  present (each process renews its own students; a dead process's expire);
- `chainrule:class:<code>:joined` — a set of every student id admitted (ids the server gave:
  a reconnection is the same student, and is let back in past the guess limit);
- `chainrule:class:<code>:addresses` — a hash, client address → students joined from it;
- `chainrule:class:<code>:names` — a hash, student id → nickname (the teacher's roster);
- `chainrule:class:<code>:removed` — a set of the student ids the teacher removed;
- `chainrule:guess:<address>:<minute>` — a counter of unknown codes tried;
- `chainrule:created:<address>:<minute>` — a counter of classes started.
Notices go out on the channel `chainrule:class:<code>` (`v` changed, `a <question> <count>`,
`e` ended, `r <student>` removed); each process holds one pattern subscription and re-reads
every class it serves whenever that subscription is re-established (pub/sub drops what is
published meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Iterable

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError as RedisOutOfMemory
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from chainrule.app.live_class.store import (
    PRESENCE_S,
    Admission,
    Listener,
    StoreUnavailable,
    by_name,
)

logger = logging.getLogger("chainrule")
PREFIX = "chainrule:class:"
MAX_CONNECTIONS = 32  # per process, besides the one subscription
RETRIES = 4  # a command on a lost connection: reconnect and run again, this many times

CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('HSET', KEYS[1], 'version', 1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""
WRITE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
local version = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], 'v')
return version
"""
ADD_ANSWER = """
if redis.call('HGET', KEYS[1], 'open') ~= ARGV[1] then return false end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
local count = redis.call('HLEN', KEYS[2])
redis.call('PUBLISH', ARGV[4], 'a ' .. ARGV[1] .. ' ' .. count)
return count
"""
CLOSE_QUESTION = """
if redis.call('HGET', KEYS[1], 'open') ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'open', '')
return redis.call('HVALS', KEYS[2])
"""
JOIN = """
local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local known = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not known and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 0 and tonumber(ARGV[6]) > 0 then
  if tonumber(redis.call('HGET', KEYS[4], ARGV[5]) or '0') >= tonumber(ARGV[6]) then
    return -1
  end
  redis.call('HINCRBY', KEYS[4], ARGV[5], 1)
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then
  for i = 2, 4 do redis.call('EXPIRE', KEYS[i], ttl) end
end
return 1
"""
REMOVE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('SADD', KEYS[6], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[6], ttl) end
local open = redis.call('HGET', KEYS[1], 'open')
if open and open ~= '' then
  local answers = KEYS[1] .. ':answers:' .. open
  if redis.call('HDEL', answers, ARGV[1]) == 1 then
    redis.call('PUBLISH', KEYS[1], 'a ' .. open .. ' ' .. redis.call('HLEN', answers))
  end
end
redis.call('PUBLISH', KEYS[1], 'r ' .. ARGV[1])
return 1
"""
SUFFIXES = ("present", "joined", "addresses", "names", "removed")  # a class's other keys


def _reaching(method):
    """`method`, with Redis unreachable said as `StoreUnavailable` (after the client's own
    retries: a connection that went stale in a restart is replaced, not reported), and Redis
    full as `OverflowError` (as the in-process store says it)."""

    @functools.wraps(method)
    async def call(self, *args, **kwargs):
        try:
            return await method(self, *args, **kwargs)
        except RedisOutOfMemory as error:  # full (noeviction): nothing is evicted to fit
            raise OverflowError(str(error)) from error
        except (RedisError, OSError) as error:
            raise StoreUnavailable(str(error)) from error

    return call


def class_key(code: str) -> str:
    return PREFIX + code


def _pairs(fields: dict[str, str]) -> list[str]:
    return [item for pair in fields.items() for item in pair]


class RedisStore:
    def __init__(self, url: str) -> None:
        self.url = url
        # A bounded pool that waits for a free connection: 300 students joining at once must
        # queue for a few connections, not open 300 (or fail). A command on a connection that
        # died (Redis restarted) reconnects and runs again, a few times over about a second,
        # before the store says it is unavailable.
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=MAX_CONNECTIONS, timeout=10, decode_responses=True,
            health_check_interval=10, socket_connect_timeout=2, socket_timeout=5,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), RETRIES),
            retry_on_error=[RedisConnectionError, RedisTimeoutError, ConnectionResetError],
        )  # fmt: skip
        self.client = redis.Redis(connection_pool=pool)
        self._create = self.client.register_script(CREATE)
        self._write = self.client.register_script(WRITE)
        self._add_answer = self.client.register_script(ADD_ANSWER)
        self._close_question = self.client.register_script(CLOSE_QUESTION)
        self._join = self.client.register_script(JOIN)
        self._remove = self.client.register_script(REMOVE)
        self._listener: Listener | None = None
        self._reader: asyncio.Task | None = None

    async def start(self, listener: Listener) -> None:
        self._listener = listener
        self._reader = asyncio.create_task(self._listen(), name="class-notices")

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await self.client.aclose()

    async def _listen(self) -> None:
        """Hear every class's notices; after a lost connection, subscribe again and tell the
        hub to re-read every class (what was published meanwhile is lost)."""
        delay = 0.05
        lost = False
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(PREFIX + "*")
                if self._listener is not None:
                    if lost:
                        self._listener.store_back()
                    for code in self._listener.codes():
                        self._listener.changed(code)
                lost = False
                delay = 0.05
                async for message in pubsub.listen():
                    if message.get("type") == "pmessage":
                        self._dispatch(message["channel"][len(PREFIX) :], message["data"])
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                raise
            except (RedisError, OSError) as error:
                logger.warning("class notices: %s; subscribing again in %.2f s", error, delay)
                if not lost and self._listener is not None:
                    self._listener.store_lost()
                lost = True
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                await asyncio.sleep(delay)
                delay = min(2.0, delay * 2)

    def _dispatch(self, code: str, data: str) -> None:
        listener = self._listener
        if listener is None or ":" in code:
            return
        if data == "v":
            listener.changed(code)
        elif data == "e":
            listener.ended(code)
        elif data.startswith("r "):
            listener.removed(code, data[2:])
        elif data.startswith("a "):
            _, question, count = data.split(" ")
            listener.counted(code, question, int(count))

    @_reaching
    async def create(self, code: str, fields: dict[str, str], ttl_s: int) -> bool:
        return bool(await self._create(keys=[class_key(code)], args=[ttl_s, *_pairs(fields)]))

    @_reaching
    async def read(self, code: str) -> dict[str, str] | None:
        fields = await self.client.hgetall(class_key(code))
        return fields or None

    @_reaching
    async def alive(self, code: str) -> bool:
        return bool(await self.client.exists(class_key(code)))

    @_reaching
    async def write(self, code: str, changes: dict[str, str], ttl_s: int) -> int | None:
        key = class_key(code)
        version = await self._write(keys=[key], args=[ttl_s, key, *_pairs(changes)])
        return int(version) if version is not None else None

    @_reaching
    async def end(self, code: str) -> None:
        key = class_key(code)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(key, *(f"{key}:{suffix}" for suffix in SUFFIXES))
            pipe.publish(key, "e")
            await pipe.execute()

    @_reaching
    async def add_answer(self, code: str, question: str, student: str, record: str) -> int | None:
        key = class_key(code)
        count = await self._add_answer(
            keys=[key, f"{key}:answers:{question}"], args=[question, student, record, key]
        )
        return int(count) if count is not None else None

    @_reaching
    async def answer_of(self, code: str, question: str, student: str) -> str | None:
        return await self.client.hget(f"{class_key(code)}:answers:{question}", student)

    @_reaching
    async def close_question(self, code: str, question: str) -> list[str] | None:
        key = class_key(code)
        answers = await self._close_question(
            keys=[key, f"{key}:answers:{question}"], args=[question]
        )
        return list(answers) if answers is not None else None

    @_reaching
    async def join(
        self, code: str, student: str, cap: int, address: str = "", per_address: int = 0
    ) -> Admission:
        key = class_key(code)
        now_ms = int(time.time() * 1000)
        admitted = await self._join(
            keys=[key, f"{key}:present", f"{key}:joined", f"{key}:addresses"],
            args=[student, now_ms, cap, int(PRESENCE_S * 1000), address, per_address],
        )
        return {1: "joined", 0: "full", -1: "address"}[int(admitted)]

    @_reaching
    async def has_joined(self, code: str, student: str) -> bool:
        return bool(await self.client.sismember(f"{class_key(code)}:joined", student))

    @_reaching
    async def name(self, code: str, student: str, name: str) -> None:
        key = class_key(code)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(f"{key}:names", student, name)
            pipe.ttl(key)
            _, ttl = await pipe.execute()
        if ttl > 0:
            await self.client.expire(f"{key}:names", ttl)

    @_reaching
    async def roster(self, code: str) -> list[tuple[str, str]]:
        key = class_key(code)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.zrangebyscore(f"{key}:present", int(time.time() * 1000), "+inf")
            pipe.hgetall(f"{key}:names")
            present, names = await pipe.execute()
        return sorted(((s, names.get(s, "")) for s in present), key=by_name)

    @_reaching
    async def joined(self, code: str) -> list[str]:
        return list(await self.client.smembers(f"{class_key(code)}:joined"))

    @_reaching
    async def remove(self, code: str, student: str) -> None:
        key = class_key(code)
        await self._remove(keys=[key, *(f"{key}:{suffix}" for suffix in SUFFIXES)], args=[student])

    @_reaching
    async def is_removed(self, code: str, student: str) -> bool:
        return bool(await self.client.sismember(f"{class_key(code)}:removed", student))

    @_reaching
    async def leave(self, code: str, student: str) -> None:
        await self.client.zrem(f"{class_key(code)}:present", student)

    @_reaching
    async def touch(self, code: str, students: Iterable[str]) -> None:
        until = int(time.time() * 1000 + PRESENCE_S * 1000)
        mapping = dict.fromkeys(students, until)
        if mapping:
            await self.client.zadd(f"{class_key(code)}:present", mapping)

    @_reaching
    async def present(self, code: str) -> int:
        key = f"{class_key(code)}:present"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, "-inf", int(time.time() * 1000))
            pipe.zcard(key)
            _, count = await pipe.execute()
        return int(count)

    async def _within_this_minute(self, kind: str, address: str, per_minute: int) -> bool:
        """Count one more `kind` (a guess, a creation) from `address` this minute: whether it
        is within `per_minute`."""
        key = f"chainrule:{kind}:{address}:{int(time.time() // 60)}"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, 120)
            count, _ = await pipe.execute()
        return int(count) <= per_minute

    @_reaching
    async def guess(self, address: str, per_minute: int) -> bool:
        return await self._within_this_minute("guess", address, per_minute)

    @_reaching
    async def creation(self, address: str, per_minute: int) -> bool:
        return await self._within_this_minute("created", address, per_minute)

    @_reaching
    async def guessed_out(self, address: str, per_minute: int) -> bool:
        count = await self.client.get(f"chainrule:guess:{address}:{int(time.time() // 60)}")
        return count is not None and int(count) >= per_minute
