"""This process's side of every class: who is connected, and getting each change to them.

Each connection has a bounded queue and its own sender task: a change is put in every queue
without waiting (one stalled socket never holds up the others), and a client whose queue is
full is dropped (closed with 4008) — its page reconnects at once and reads the current state,
so it falls behind by one reconnect, never by a growing backlog. Every message to a room is
encoded once and shared by all its queues.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

from starlette.websockets import WebSocket

from chainrule.app.http.ratelimit import SlidingWindowLimiter
from chainrule.app.live_class.codes import roster_id
from chainrule.app.live_class.store import ClassStore, MemoryStore, StoreUnavailable
from chainrule.app.settings import AppSettings

logger = logging.getLogger("chainrule")

TOO_SLOW = 4008  # close code: this client fell behind (the page reconnects and resyncs)
COUNT_DELAY_S = 0.05  # answer counts to the teacher at most this often per class and process
PRESENCE_EVERY_S = 1.0
FINISH_S = 1.0  # how long a client may take to receive the class's last word
ENDED = '{"type":"ended"}'
STORE_LOST = '{"type":"store","up":false}'  # every page says "Connection to the class lost"
STORE_BACK = '{"type":"store","up":true}'
MOVED = '{"type":"moved"}'  # to a teacher page: another page took the class (its link)
REMOVED = '{"type":"removed"}'  # to a student the teacher removed (then closed 4403: final)
NOT_ALLOWED = 4403  # close code: refused, or removed (final: the page does not reconnect)
CONTROL_MOVED = 4409  # close code: this teacher page no longer drives (final, no reconnecting)


def snapshot_text(fields: dict[str, str]) -> str:
    """The whole state of a class as students receive it. The fields are JSON that this server
    wrote (store.py), so they are joined as they are."""
    return (
        f'{{"type":"snapshot","version":{int(fields["version"])},'
        f'"mode":{json.dumps(fields["mode"])},"view":{fields["view"]},'
        f'"question":{fields["question"]},"board":{fields["board"]},'
        f'"locked":{"true" if fields.get("locked") else "false"}}}'
    )


def roster_text(code: str, roster: list[tuple[str, str]], fields: dict[str, str]) -> str:
    """The `students` message: how many are connected, the cap, and who (each by its roster id
    and nickname; "" for a student who gave none)."""
    students = [{"id": roster_id(code, student), "name": name} for student, name in roster]
    maximum = int(fields.get("max", "0") or 0)
    message = {"type": "students", "count": len(roster), "max": maximum, "list": students}
    return json.dumps(message, ensure_ascii=False)


class Bucket:
    """A token bucket: `capacity` at once, refilled at `per_s`."""

    __slots__ = ("capacity", "per_s", "tokens", "at")

    def __init__(self, capacity: float, per_s: float) -> None:
        self.capacity = capacity
        self.per_s = per_s
        self.tokens = capacity
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.per_s)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class Client:
    """One connected page: a teacher's or a student's."""

    __slots__ = (
        "socket", "role", "student", "name", "lang", "queue", "sender", "dropped", "finishing",
        "seat",
    )  # fmt: skip

    def __init__(
        self, socket: WebSocket, role: str, student: str, name: str, lang: str, queue_size: int
    ) -> None:
        self.socket = socket
        self.role = role
        self.student = student
        self.name = name
        self.lang = lang
        self.queue: asyncio.Queue[str] = asyncio.Queue(queue_size)
        self.dropped = False
        self.finishing: asyncio.Task | None = None
        self.seat = ""  # a teacher page's: it drives while the class's `teacher` field says so
        self.sender = asyncio.create_task(self._send_all())

    async def _send_all(self) -> None:
        """Send what is queued, in order, until the queue says stop ("": see `finish`)."""
        with contextlib.suppress(Exception):
            while text := await self.queue.get():
                await self.socket.send_text(text)

    def offer(self, text: str) -> None:
        """Queue `text` for this client; a full queue drops the client."""
        if self.dropped:
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.drop(TOO_SLOW)

    def drop(self, code: int) -> None:
        """Stop sending and close the socket (the page reconnects and reads the state)."""
        if self.dropped:
            return
        self.dropped = True
        self.sender.cancel()
        asyncio.create_task(self._close(code))

    def finish(self, text: str, code: int) -> None:
        """Send `text` last, then close with `code` (the class ended: the page must hear why
        before the close). What is still queued goes first; a client that takes more than
        `FINISH_S` to take it is closed anyway."""
        if self.dropped:
            return
        self.dropped = True
        while self.queue.qsize() > max(0, self.queue.maxsize - 2):
            self.queue.get_nowait()  # states the last word supersedes
        self.queue.put_nowait(text)
        self.queue.put_nowait("")
        self.finishing = asyncio.create_task(self._finish(code))

    async def _finish(self, code: int) -> None:
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(self.sender, FINISH_S)
        await self._close(code)

    async def _close(self, code: int) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.socket.close(code), timeout=1.0)

    async def stop(self) -> None:
        if self.finishing is not None:  # the last word is on its way: let it go out
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self.finishing
            return
        self.sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.sender


class Room:
    """This process's connections to one class and the last state it sent them."""

    __slots__ = (
        "code",
        "clients",
        "version",
        "fields",
        "refreshing",
        "dirty",
        "counts",
        "roster",
    )

    def __init__(self, code: str) -> None:
        self.code = code
        self.clients: set[Client] = set()
        self.version = 0
        self.fields: dict[str, str] = {}
        self.refreshing = False
        self.dirty = False
        self.counts: dict[str, int] = {}  # question → answers, not yet sent to the teachers
        self.roster: list[tuple[str, str]] | None = None  # the roster last sent to the teachers

    def send(self, text: str, role: str | None = None) -> None:
        for client in list(self.clients):
            if role is None or client.role == role:
                client.offer(text)


class Hub:
    """The rooms of this process; the store's listener."""

    def __init__(self, store: ClassStore, queue_size: int = 32, sockets_per_2s: int = 300) -> None:
        self.store = store
        self.queue_size = queue_size
        # Class sockets opened by each client address in the last 2 s (connection.py serve).
        self.knocks = SlidingWindowLimiter(sockets_per_2s, window_s=2.0)
        self.rooms: dict[str, Room] = {}
        self._tasks: set[asyncio.Task] = set()
        self._ticker: asyncio.Task | None = None
        self.reachable = True  # the store answers (Redis); while not, pages are told so

    async def start(self) -> None:
        await self.store.start(self)
        self._ticker = asyncio.create_task(self._tick())

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        for room in list(self.rooms.values()):
            for client in list(room.clients):
                client.drop(1001)
        await self.store.close()

    def _spawn(self, coroutine) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # The store's listener.
    def codes(self) -> list[str]:
        return list(self.rooms)

    def changed(self, code: str) -> None:
        room = self.rooms.get(code)
        if room is None:
            return
        room.dirty = True
        if not room.refreshing:
            room.refreshing = True
            self._spawn(self._refresh(room))

    def counted(self, code: str, question: str, count: int) -> None:
        room = self.rooms.get(code)
        if room is None:
            return
        first = not room.counts
        room.counts[question] = count  # notices come in the order the store counted
        if first:
            asyncio.get_running_loop().call_later(COUNT_DELAY_S, self._send_counts, room)

    def removed(self, code: str, student: str) -> None:
        room = self.rooms.get(code)
        if room is None:
            return
        for client in list(room.clients):
            if client.role == "student" and client.student == student:
                client.finish(REMOVED, NOT_ALLOWED)

    def store_lost(self) -> None:
        if not self.reachable:
            return
        self.reachable = False
        logger.warning("class store lost: telling %d rooms", len(self.rooms))
        for room in self.rooms.values():
            room.send(STORE_LOST)

    def store_back(self) -> None:
        if self.reachable:
            return
        self.reachable = True
        logger.warning("class store back")
        for room in self.rooms.values():
            room.send(STORE_BACK)

    def ended(self, code: str) -> None:
        room = self.rooms.get(code)
        if room is None:
            return
        for client in list(room.clients):
            client.finish(ENDED, 1000)

    async def _refresh(self, room: Room) -> None:
        """Read the class and send its state to this process's clients, once per burst of
        notices (a read in progress answers every notice that came before it started)."""
        try:
            while room.dirty:
                room.dirty = False
                fields = await self.store.read(room.code)
                if fields is None:
                    self.ended(room.code)
                    return
                self.deliver(room, fields)
        except StoreUnavailable as error:  # read again when the store is back (store_back)
            logger.warning("class %s: refresh waits for the store: %s", room.code, error)
        except Exception:
            logger.exception("class %s: refresh failed", room.code)
        finally:
            room.refreshing = False

    def deliver(self, room: Room, fields: dict[str, str]) -> None:
        """Send `fields` to the room if they are newer than what it has."""
        version = int(fields["version"])
        if version <= room.version:
            return
        room.version = version
        room.fields = fields
        self.unseat(room)
        room.send(snapshot_text(fields))

    def unseat(self, room: Room) -> None:
        """Teacher pages that are no longer the class's teacher hear so, and go."""
        seat = room.fields.get("teacher", "")
        for client in list(room.clients):
            if client.role == "teacher" and client.seat and seat and client.seat != seat:
                client.finish(MOVED, CONTROL_MOVED)

    def _send_counts(self, room: Room) -> None:
        counts, room.counts = room.counts, {}
        for question, count in counts.items():
            message = {"type": "answers", "question": question, "count": count}
            room.send(json.dumps(message), role="teacher")

    # Connections.
    def attach(self, code: str, client: Client, fields: dict[str, str]) -> Room:
        """Add a client and send it the class as it is now."""
        room = self.rooms.get(code)
        if room is None:
            room = self.rooms[code] = Room(code)
        room.clients.add(client)
        if int(fields["version"]) > room.version:
            room.version = int(fields["version"])
            room.fields = fields
        client.offer(snapshot_text(room.fields))
        self.unseat(room)
        if not self.reachable:
            client.offer(STORE_LOST)
        if client.role == "teacher":
            room.roster = None  # the new teacher page hears the roster at the next tick
        return room

    def detach(self, code: str, client: Client) -> None:
        room = self.rooms.get(code)
        if room is None:
            return
        room.clients.discard(client)
        if not room.clients:
            del self.rooms[code]

    async def _tick(self) -> None:
        """Every second: a class that expired or was lost ends for its pages; the roster to each
        teacher; presence renewed; old classes forgotten (in-process store)."""
        ticks = 0
        was_reachable = True
        while True:
            await asyncio.sleep(PRESENCE_EVERY_S)
            ticks += 1
            if not self.reachable:
                was_reachable = False
                continue  # nothing to read; presence is renewed when the store is back
            renew, was_reachable = ticks % 10 == 0 or not was_reachable, True
            for room in list(self.rooms.values()):
                try:
                    await self._tick_room(room, renew=renew)
                except StoreUnavailable as error:
                    logger.warning("class %s: presence waits for the store: %s", room.code, error)
                except Exception:
                    logger.exception("class %s: presence failed", room.code)
            if isinstance(self.store, MemoryStore) and ticks % 60 == 0:
                self.store.sweep()

    async def _tick_room(self, room: Room, renew: bool) -> None:
        if not await self.store.alive(room.code):  # expired, or lost from the store
            self.ended(room.code)
            return
        if renew:
            students = [c.student for c in room.clients if c.role == "student" and not c.dropped]
            await self.store.touch(room.code, students)
        if any(c.role == "teacher" for c in room.clients):
            roster = await self.store.roster(room.code)
            if roster != room.roster:
                room.roster = roster
                room.send(roster_text(room.code, roster, room.fields), role="teacher")


def make_hub(settings: AppSettings) -> Hub:
    """The hub of this process: classes in Redis when `redis_url` is set, else in memory."""
    if settings.redis_url:
        from chainrule.app.live_class.redis_store import RedisStore

        store: ClassStore = RedisStore(settings.redis_url)
    else:
        store = MemoryStore(settings.class_max_classes)
    return Hub(store, settings.class_queue_size, settings.class_sockets_per_address_per_2s)
