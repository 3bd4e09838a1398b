"""A bounded, thread-safe LRU cache with hit/miss counters (layouts and whole responses), and
the same in front of a store shared by every process (Redis), for layouts."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from threading import Lock
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")
logger = logging.getLogger("chainrule")


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    entries: int
    size: int


class BoundedCache(Generic[V]):
    """Least-recently-used cache bounded both in entries and in total `sizeof` of its values.

    A value larger than a quarter of `max_size` is never stored: one huge graph must not evict
    every small one.
    """

    def __init__(
        self, max_entries: int, max_size: int, sizeof: Callable[[V], int] = lambda _: 1
    ) -> None:
        self.max_entries = max_entries
        self.max_size = max_size
        self._sizeof = sizeof
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._size = 0
        self._hits = 0
        self._misses = 0
        self._lock = Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self._misses += 1
                return None
            self._items.move_to_end(key)
            self._hits += 1
            return item[0]

    def put(self, key: Hashable, value: V) -> None:
        size = self._sizeof(value)
        if self.max_entries <= 0 or size * 4 > self.max_size:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= old[1]
            self._items[key] = (value, size)
            self._size += size
            while len(self._items) > self.max_entries or self._size > self.max_size:
                _, (_, evicted_size) = self._items.popitem(last=False)
                self._size -= evicted_size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._size = 0

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._items), self._size)


class RemoteBytes(Protocol):
    """A shared store of bytes by key with an expiry (Redis: `get`, `set(..., ex=)`)."""

    def get(self, name: str) -> bytes | None: ...

    def set(self, name: str, value: bytes, ex: int) -> object: ...


class SharedCache(Generic[V]):
    """A BoundedCache in front of a store shared by every process (Redis), with the same
    `get`/`put`/`clear`/`stats`: a local miss asks the store (and keeps what it finds), a put
    goes to both. The store only saves time, so a store that fails or holds something
    unreadable is passed over, never an error."""

    def __init__(
        self,
        local: BoundedCache[V],
        remote: RemoteBytes,
        prefix: str,
        encode: Callable[[V], bytes],
        decode: Callable[[bytes], V],
        ttl_s: int,
    ) -> None:
        self.local = local
        self.remote = remote
        self.prefix = prefix
        self.encode = encode
        self.decode = decode
        self.ttl_s = ttl_s

    def _name(self, key: Hashable) -> str:
        return self.prefix + (key.hex() if isinstance(key, bytes) else str(key))

    def get(self, key: Hashable) -> V | None:
        value = self.local.get(key)
        if value is not None:
            return value
        try:
            data = self.remote.get(self._name(key))
            value = self.decode(data) if data is not None else None
        except Exception:  # an unreachable or odd store: lay out here, as without one
            logger.warning("shared cache: reading %s failed", self._name(key), exc_info=True)
            return None
        if value is not None:
            self.local.put(key, value)
        return value

    def put(self, key: Hashable, value: V) -> None:
        self.local.put(key, value)
        try:
            self.remote.set(self._name(key), self.encode(value), ex=self.ttl_s)
        except Exception:
            logger.warning("shared cache: writing %s failed", self._name(key), exc_info=True)

    def clear(self) -> None:
        self.local.clear()

    def stats(self) -> CacheStats:
        return self.local.stats()
