"""pitui.collector: counted pauses of the cyclic garbage collector, freezing, thawing."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from pitui import collector


@pytest.fixture(autouse=True)
def _collector_back_on() -> Iterator[None]:
    assert gc.isenabled()
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.enable()
    gc.set_threshold(*thresholds)


class Cycle:
    """An object that only the cyclic collector can free (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


def frozen_cycle() -> weakref.ref[Cycle]:
    """A cycle alive when the heap is frozen, garbage right after."""
    cycle = Cycle()
    ref = weakref.ref(cycle)
    collector.freeze()
    del cycle
    return ref


def test_pauses_are_counted_and_collection_is_back_after_the_last() -> None:
    collector.pause("a")
    collector.pause("b")
    collector.pause("b")  # the same pause again counts once
    assert not gc.isenabled()
    collector.resume("a")
    assert not gc.isenabled()  # "b" still holds it
    collector.resume("b")
    assert gc.isenabled()
    collector.resume("b")  # ended already: nothing happens
    collector.resume("never paused")
    assert gc.isenabled()


def test_a_pause_of_another_thread_keeps_it_off() -> None:
    started, done = threading.Event(), threading.Event()

    def hold() -> None:
        with collector.paused():
            started.set()
            done.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    assert started.wait(5)
    with collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the thread's pause is not over
    done.set()
    thread.join(5)
    assert gc.isenabled()


def test_collection_that_was_off_before_stays_off() -> None:
    gc.disable()
    with collector.paused():
        pass
    assert not gc.isenabled()
    collector.pause(collector.STARTUP)
    collector.resumer(collector.STARTUP)()
    assert not gc.isenabled()


def test_thawed_garbage_is_freed_and_the_survivors_frozen_again() -> None:
    ref = frozen_cycle()
    gc.collect()
    assert ref() is not None  # frozen: never collected
    survivor = Cycle()
    collector.thaw()
    assert gc.get_freeze_count() == 0
    gc.collect()  # the next full collection frees it ...
    assert ref() is None
    assert gc.get_freeze_count() > 0  # ... and freezes what survived it
    keep = weakref.ref(survivor)
    del survivor
    gc.collect()
    assert keep() is not None  # frozen again
    collector.thaw()  # and thawed again
    gc.collect()
    assert keep() is None


def test_a_thaw_with_nothing_frozen_freezes_nothing_later() -> None:
    gc.unfreeze()
    collector.thaw()
    gc.collect()
    assert gc.get_freeze_count() == 0


def test_only_a_full_collection_freezes_again() -> None:
    ref = frozen_cycle()
    collector.thaw()
    gc.collect(0)
    gc.collect(1)
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert ref() is None
    assert gc.get_freeze_count() > 0


def test_full_collections_are_rarer_until_the_last_holder_is_done() -> None:
    before = gc.get_threshold()
    rarer = (*before[:2], collector.OLDEST_EVERY)
    assert 10 * before[2] <= collector.OLDEST_EVERY
    collector.collect_fully_less_often("reply")
    collector.collect_fully_less_often("other")
    assert gc.get_threshold() == rarer
    collector.collect_fully_as_usual("reply")
    collector.collect_fully_as_usual("reply")  # once only
    assert gc.get_threshold() == rarer
    collector.collect_fully_as_usual("other")
    assert gc.get_threshold() == before
    collector.collect_fully_as_usual("never")
    assert gc.get_threshold() == before
