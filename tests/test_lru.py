"""pitui.lru: the bounded cache that forgets the least recently used entry."""

from __future__ import annotations

import pytest

from pitui.lru import LruCache


def test_adding_past_the_capacity_forgets_the_least_recently_used() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert list(cache) == ["a", "c"] and len(cache) == 2
    assert cache.get("b") is None


def test_peek_and_in_do_not_keep_an_entry_alive() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1 and "a" in cache
    cache.put("c", 3)
    assert "a" not in cache and list(cache) == ["b", "c"]


def test_putting_an_existing_key_refreshes_it() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert list(cache) == ["a", "c"] and cache.get("a") == 10


def test_none_is_a_value_a_default_tells_apart() -> None:
    cache: LruCache[str, int | None] = LruCache(4)
    cache.put("nothing", None)
    missing = object()
    assert cache.get("nothing", missing) is None
    assert cache.get("other", missing) is missing
    assert cache.peek("other", missing) is missing


def test_pop_and_clear_forget() -> None:
    cache: LruCache[str, int] = LruCache(3)
    for i, key in enumerate("abc"):
        cache.put(key, i)
    assert cache.pop("b") == 1 and cache.pop("b") is None
    assert list(cache) == ["a", "c"]
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


def test_a_cache_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError):
        LruCache(0)
