"""litellm's streams run on an event loop of their own, in one background thread.

Parsing a streamed chunk costs litellm (and the OpenAI SDK under it) about a millisecond of
CPU. On the caller's event loop (the TUI's) that work starves everything else while a reply
streams: a buffered stream is read chunk after chunk without giving the loop a turn, so keys,
timers and frames wait. Here the stream is consumed on the provider loop, and what it produces
reaches the caller's loop in batches (:class:`Batcher`): one hand-over per ``INTERVAL`` at
most, each holding every delta received meanwhile, merged.

Every litellm call goes through this one loop, so the HTTP clients litellm caches are always
used on the loop that created them. Cancelling the caller cancels the call on the provider
loop, and the caller resumes only once it has stopped (nothing is fed after that).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

T = TypeVar("T")
E = TypeVar("E")

INTERVAL = 1 / 120
"""Seconds between two hand-overs of streamed deltas to the caller's loop (at most)."""

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


class _ProviderLoop(asyncio.SelectorEventLoop):
    """An event loop that does not wake itself up for a callback added from its own thread.

    ``call_soon_threadsafe`` writes a byte to the loop's wake-up pipe: a system call, which
    lets another thread take the GIL. litellm's stream wrapper starts and drops an async
    generator for every chunk, and asyncio schedules each one's ``aclose()`` that way; with the
    UI thread busy painting, each of those system calls cost the stream up to a GIL switch
    interval (5 ms), so a reply streamed at full speed took seconds per thousand chunks. A
    callback added by the running loop's own thread needs no wake-up: it runs at the next
    iteration."""

    thread_id: int | None = None

    def call_soon_threadsafe(  # type: ignore[override]
        self, callback: Callable[..., Any], *args: Any, context: Any = None
    ) -> asyncio.Handle:
        if self.thread_id is not None and threading.get_ident() == self.thread_id:
            return self.call_soon(callback, *args, context=context)
        return super().call_soon_threadsafe(callback, *args, context=context)


def provider_loop() -> asyncio.AbstractEventLoop:
    """The provider loop, started on first use (a daemon thread: it never delays exit)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = _ProviderLoop()
            started = threading.Event()

            def run() -> None:
                loop.thread_id = threading.get_ident()
                asyncio.set_event_loop(loop)
                loop.call_soon(started.set)
                loop.run_forever()

            threading.Thread(target=run, name="pitui-provider-loop", daemon=True).start()
            started.wait()
            _loop = loop
        return _loop


async def run_on_provider_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` run on the provider loop; cancelling the caller cancels it there."""
    target = provider_loop()
    caller = asyncio.get_running_loop()
    if caller is target:
        return await coro
    done: asyncio.Future[T] = caller.create_future()
    holder: list[asyncio.Task[T]] = []

    def settle(task: asyncio.Task[T]) -> None:
        if done.done():
            return
        if task.cancelled():
            done.cancel()
        elif (exc := task.exception()) is not None:
            done.set_exception(exc)
        else:
            done.set_result(task.result())

    def start() -> None:
        task = target.create_task(coro)
        holder.append(task)
        task.add_done_callback(lambda t: _call_soon(caller, settle, t))

    target.call_soon_threadsafe(start)
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        if done.done() and not done.cancelled():
            raise
        target.call_soon_threadsafe(_cancel, holder)
        # Resume only when the call has stopped: the caller then reads what it had received.
        while not done.done():
            try:
                await asyncio.shield(done)
            except asyncio.CancelledError:
                continue
            except Exception:
                break
        raise


def _cancel(holder: list[asyncio.Task[Any]]) -> None:
    for task in holder:
        task.cancel()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., Any], *args: Any) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(callback, *args)


class Batcher(Generic[E]):
    """Deltas produced on the provider loop, handed to ``emit`` on the caller's loop in order,
    at most once per ``interval``; ``merge(previous, new)`` folds two adjacent events into one
    (or returns None to keep both)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        emit: Callable[[E], None],
        merge: Callable[[E, E], E | None],
        interval: float = INTERVAL,
    ) -> None:
        self._loop = loop
        self._emit = emit
        self._merge = merge
        self._interval = interval
        self._lock = threading.Lock()
        self._pending: list[E] = []
        self._scheduled = False
        self._last = 0.0

    def add(self, event: E) -> None:
        """Called on the provider loop for each delta."""
        with self._lock:
            if self._pending:
                merged = self._merge(self._pending[-1], event)
                if merged is not None:
                    self._pending[-1] = merged
                else:
                    self._pending.append(event)
            else:
                self._pending.append(event)
            if self._scheduled:
                return
            self._scheduled = True
        _call_soon(self._loop, self._schedule)

    def _schedule(self) -> None:
        delay = self._last + self._interval - time.monotonic()
        if delay > 0:
            self._loop.call_later(delay, self.drain)
        else:
            self.drain()

    def drain(self) -> None:
        """Hand over everything received so far (on the caller's loop)."""
        with self._lock:
            events, self._pending = self._pending, []
            self._scheduled = False
        self._last = time.monotonic()
        for event in events:
            self._emit(event)
