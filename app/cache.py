"""A bounded, thread-safe LRU cache with hit/miss counters (layouts and whole responses)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from threading import Lock
from typing import Generic, TypeVar

V = TypeVar("V")


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
