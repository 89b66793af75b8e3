"""Importing litellm the safe way: offline cost map, no debug prints, imported once, on demand,
and never on an event loop. ``import litellm`` takes seconds, and its first call imports and
loads more (another ~2 s here): :func:`preload` does both in a thread (a mocked call, no
network), :func:`litellm_ready` awaits that from async code without blocking the loop.

Waiting takes no thread: a caller's future is settled when the import ends, so a program that
quits meanwhile is never held up by the import (``asyncio.run`` joins its executor's threads
on the way out; a thread blocked on the import would keep it there for seconds).

While it imports, the thread makes way for the interactive thread: after :func:`make_way`
(each key or prompt) it pauses at the next module boundary, so what the key causes is drawn
without sharing the interpreter with the import. It never pauses longer than it has run
since its last pause, so typing slows the import down at most by half.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.abc
import os
import sys
import threading
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from pitui import collector

_lock = threading.Lock()
_module: Any = None
_preload: threading.Thread | None = None
_ready = threading.Event()
_preload_lock = threading.Lock()
_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

MAKE_WAY = 0.1
"""Seconds the background import stands aside after :func:`make_way` (at most)."""

_way_until = 0.0


def litellm() -> Any:
    """The litellm module, configured for a TUI: no network fetch at import, no stdout noise."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            # After every request litellm copies each string of its messages for its logging
            # callbacks (cutting base64 images short); pitui has none, and at 1,800 messages
            # that walk took ~8 ms a request. 0 turns it off (the payload is then not copied).
            os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")
            import litellm as module

            module.suppress_debug_info = True
            module.drop_params = True
            module.telemetry = False
            # Adjacent text deltas merged before litellm parses them (pitui.llm.coalesce).
            from pitui.llm.coalesce import coalescing_client

            module.aclient_session = coalescing_client()
            _module = module
    return _module


def loaded() -> bool:
    return _module is not None


def preload() -> None:
    """Start importing and warming up litellm in a background thread (once)."""
    global _preload
    with _preload_lock:
        if _preload is not None or _ready.is_set():
            return
        _preload = threading.Thread(target=_run_preload, name="pitui-litellm-import", daemon=True)
    # What the caller's loop needs to wait for work in a thread (``asyncio.to_thread``):
    # imported now, not later on the loop while the import holds the interpreter.
    import concurrent.futures.thread  # noqa: F401

    _preload.start()


def _run_preload() -> None:
    finder = _MakeWay(threading.get_ident())
    sys.meta_path.insert(0, finder)
    # litellm's import and first call leave ~500k objects that live as long as the process,
    # and almost no garbage: no collections meanwhile (each full pass held the interpreter,
    # and so the UI, 40-210 ms, seven times), and none over them afterwards (250-340 ms each,
    # several times per streamed reply). See pitui.collector.
    key = object()
    collector.pause(key)
    try:
        _prepare()
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        collector.freeze()
        collector.resume(key)
        _ready.set()
        _wake_waiters()


def _prepare() -> None:
    # The request that needs litellm imports it again and reports what goes wrong there.
    try:
        with contextlib.suppress(Exception):
            _warm_up(litellm())
    finally:
        _ready.set()


def _warm_up(module: Any) -> None:
    """One mocked streamed call (no network): litellm's first call imports its logging,
    proxy types and tokenizer; done here, a real first request does not stall the loop."""

    async def call() -> None:
        response = await module.acompletion(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="ok",
            stream=True,
            api_key="unused",
        )
        async for _ in response:
            pass

    asyncio.run(call())
    # A mocked call skips the HTTP path; its first real use imports litellm's service logger
    # (Prometheus metric classes: 50 ms here, 0.5 s on a loaded machine, before the first
    # token could be shown).
    import litellm._service_logger  # noqa: F401


def _wake_waiters() -> None:
    with _preload_lock:
        waiters = list(_waiters)
        _waiters.clear()
    for loop, future in waiters:
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits any more
            loop.call_soon_threadsafe(_settle, future)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def litellm_ready() -> Any:
    """The litellm module, imported off the event loop if it is not yet (after the preload's
    warm-up, so both never import at the same time). Waiting holds no thread."""
    if _module is not None and (_preload is None or _ready.is_set()):
        return _module
    preload()
    future: asyncio.Future[None] | None = None
    with _preload_lock:
        if not _ready.is_set():
            future = asyncio.get_running_loop().create_future()
            _waiters.append((asyncio.get_running_loop(), future))
    if future is not None:
        try:
            await future
        finally:
            with _preload_lock, contextlib.suppress(ValueError):
                _waiters.remove((asyncio.get_running_loop(), future))
    if _module is not None:
        return _module
    # The background import failed: import here, in a thread, to raise what goes wrong.
    return await asyncio.to_thread(litellm)


def make_way(seconds: float = MAKE_WAY) -> None:
    """Something the user sees is about to be drawn (a key, a prompt): the background import
    pauses for up to ``seconds`` at its next module boundary. Any thread; cheap."""
    global _way_until
    if _preload is not None and not _ready.is_set():
        _way_until = max(_way_until, time.monotonic() + seconds)


class _MakeWay(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path`` during the preload; finds nothing. Called in the import
    thread before each module it loads, it pauses there while :func:`make_way` asks, but never
    longer than the thread has run since its last pause."""

    def __init__(self, thread_id: int) -> None:
        self._thread_id = thread_id
        self._free_until = 0.0  # no pause before this time (the import's fair share)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> None:
        if threading.get_ident() != self._thread_id:
            return None
        now = time.monotonic()
        pause = min(_way_until - now, MAKE_WAY)
        if pause > 0 and now >= self._free_until:
            time.sleep(pause)
            self._free_until = time.monotonic() + pause
        return None
