"""A bounded cache that forgets what was used least recently.

:class:`LruCache` is the one such cache in pitui (projections per leaf, token counts per entry,
the tree's row texts and painted rows, parsed entries of a search, checkpoint answers, context
views). ``functools.lru_cache`` stays the tool for a cached *function*; this is for caches an
object owns, clears and looks into.

Not thread-safe: a cache shared between threads is guarded by its owner's lock.

Pure: stdlib only, so every layer may use it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class LruCache(Generic[K, V]):
    """At most ``capacity`` entries; adding one more forgets the least recently used.

    :meth:`get` and :meth:`put` make an entry the most recent; :meth:`peek` and ``in`` do not
    (a look that must not keep an entry alive).
    """

    __slots__ = ("_entries", "capacity")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an LRU cache holds at least one entry, not {capacity}")
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()

    @overload
    def get(self, key: K) -> V | None: ...
    @overload
    def get(self, key: K, default: D) -> V | D: ...
    def get(self, key: K, default: object = None) -> object:
        """The value under ``key`` (now the most recently used), else ``default``."""
        entries = self._entries
        if key in entries:
            entries.move_to_end(key)
            return entries[key]
        return default

    @overload
    def peek(self, key: K) -> V | None: ...
    @overload
    def peek(self, key: K, default: D) -> V | D: ...
    def peek(self, key: K, default: object = None) -> object:
        """The value under ``key``, else ``default``, without touching the order."""
        return self._entries.get(key, default)

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key`` as the most recently used; forget the least recently
        used entries beyond the capacity."""
        entries = self._entries
        entries[key] = value
        entries.move_to_end(key)
        while len(entries) > self.capacity:
            entries.popitem(last=False)

    def pop(self, key: K) -> V | None:
        """Forget ``key``; its value, or None when it was not there."""
        return self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        """The keys, least recently used first."""
        return iter(self._entries)

    def __repr__(self) -> str:
        return f"LruCache({len(self._entries)}/{self.capacity})"
