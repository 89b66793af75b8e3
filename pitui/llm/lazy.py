"""Importing litellm the safe way: offline cost map, no debug prints, imported once, on demand,
and never on an event loop. ``import litellm`` takes seconds, and its first call imports and
loads more (another ~2 s here): :func:`preload` does both in a thread (a mocked call, no
network), :func:`litellm_ready` awaits that from async code without blocking the loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from typing import Any

_lock = threading.Lock()
_module: Any = None
_preload: threading.Thread | None = None
_ready = threading.Event()
_preload_lock = threading.Lock()


def litellm() -> Any:
    """The litellm module, configured for a TUI: no network fetch at import, no stdout noise."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
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
        _preload = threading.Thread(target=_prepare, name="pitui-litellm-import", daemon=True)
    _preload.start()


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


async def litellm_ready() -> Any:
    """The litellm module, imported off the event loop if it is not yet (and, when
    :func:`preload` started, after its warm-up, so both never import at the same time)."""
    if _preload is not None and not _ready.is_set():
        await asyncio.to_thread(_ready.wait)
    if _module is not None:
        return _module
    return await asyncio.to_thread(litellm)
