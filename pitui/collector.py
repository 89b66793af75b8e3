"""When Python's cyclic garbage collector runs, and over what.

pitui's long-lived heap is large and makes little cyclic garbage: litellm's import leaves about
half a million objects (it turned up 1,472 pieces of garbage among them), a big session's nodes
and Textual's modules live as long as the process. A full collection walks every tracked
object while it holds the interpreter: with litellm loaded, 250-340 ms, several times while a
reply streamed (the keys typed meanwhile echoed that much later), and seven times while litellm
imported after the first frame. So:

- :func:`pause` / :func:`paused`: no collections while start-up, a session load or a tree
  layout creates many objects and no garbage. Pauses are counted and any thread may hold one:
  collection is back on when the last ends (as it was before the first began).
- :func:`freeze`: what is alive now lives as long as the process (the start-up heap, litellm
  once imported): later collections skip it (``gc.freeze``).
- :func:`thaw`: frozen objects may have become garbage (the app switched sessions): unfreeze
  them; the next full collection frees what is garbage, and what survives it is frozen again.
  Thawing costs one full collection over everything (about a second at 200k entries with
  litellm loaded), so unmounting chat entries does not thaw: the widgets alive at a freeze
  (litellm's comes a few seconds after start-up, with the chat's first window mounted) stay
  in memory once unmounted, until the next switch. That is bounded: 5 MiB for a 150-entry
  window of a generated 200k session (RSS after four "Show earlier" clicks, 267 against 262
  MiB unfrozen).
- :func:`collect_fully_less_often`: with so much frozen, what is left for full collections is
  small, and Python starts one whenever it grew by a quarter: every 2-3 s while a reply
  streamed, each holding the screen 15-76 ms (a frame written meanwhile reached the terminal
  that much later). From the agent's first reply of a run to the run's end, the chat has them
  start a tenth as often (none during a 16 s reply); when the agent is idle, as usual, so that
  what the chat unmounts (scrolling back through a long session) is freed as soon as before.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator
from typing import Any

STARTUP = "start-up"
"""The pause from the TUI's start to its first frame (``pitui.cli`` and ``pitui.cli.tui``)."""

_lock = threading.Lock()
_holds: set[object] = set()
_was_enabled = True  # the collector's state when the first pause began
_refreeze = False  # freeze again after the next full collection (see thaw)
_watching = False  # _after_collection is among gc.callbacks
_rare: set[object] = set()  # holders of collect_fully_less_often
_usual: tuple[int, int, int] | None = None  # the thresholds before the first of them


def pause(key: object) -> None:
    """No collections until :func:`resume` with the same ``key`` (pausing twice with one key
    counts once)."""
    global _was_enabled
    with _lock:
        if not _holds:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holds.add(key)


def resume(key: object) -> None:
    """End the pause ``key`` (nothing if it has ended already); collection is back on when no
    pause is left, unless it was off before the first began."""
    with _lock:
        if key not in _holds:
            return
        _holds.discard(key)
        if not _holds and _was_enabled:
            gc.enable()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No collections inside the block (unless another pause outlives it)."""
    key = object()
    pause(key)
    try:
        yield
    finally:
        resume(key)


def resumer(key: object) -> Callable[[], None]:
    """A function that ends the pause ``key`` (for hooks that take no arguments)."""
    return lambda: resume(key)


OLDEST_EVERY = 100
"""Collections of the middle generation between two of the oldest (Python's default: 10)."""


def collect_fully_less_often(key: object) -> None:
    """Full collections start a tenth as often until :func:`collect_fully_as_usual` with the
    same ``key`` (counted like pauses; see the module)."""
    global _usual
    with _lock:
        if not _rare:
            _usual = gc.get_threshold()
            gc.set_threshold(_usual[0], _usual[1], OLDEST_EVERY)
        _rare.add(key)


def collect_fully_as_usual(key: object) -> None:
    """End :func:`collect_fully_less_often` for ``key`` (nothing if it has ended already)."""
    with _lock:
        if key not in _rare:
            return
        _rare.discard(key)
        if not _rare and _usual is not None:
            gc.set_threshold(*_usual)


def freeze() -> None:
    """Keep every object alive now out of later collections."""
    gc.freeze()


def thaw() -> None:
    """Unfreeze what :func:`freeze` kept out; frozen again after the next full collection."""
    global _refreeze, _watching
    with _lock:
        if not gc.get_freeze_count():
            return  # nothing frozen (the tests, or thawed already and not frozen since)
        gc.unfreeze()
        _refreeze = True
        if not _watching:  # installed once: the collector calls its callbacks by index, so
            _watching = True  # one that removed itself would make it skip the next one
            gc.callbacks.append(_after_collection)


def _after_collection(phase: str, info: dict[str, Any]) -> None:
    global _refreeze
    if not _refreeze or phase != "stop" or info.get("generation") != 2:
        return
    # Called by the collector once its pass is complete: its lists are consistent.
    _refreeze = False
    gc.freeze()
