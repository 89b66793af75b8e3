"""litellm is imported (and warmed up) off the event loop: awaiting it never stalls the loop,
and a request made before the background import finished waits for it instead of importing
on the loop."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from pitui.llm import lazy


async def test_litellm_ready_waits_in_a_thread_without_stalling_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lazy, "_ready", threading.Event())
    monkeypatch.setattr(lazy, "_preload", None)
    module_after_import = object()
    monkeypatch.setattr(lazy, "_module", None)
    started: list[str] = []

    def slow_prepare() -> None:
        started.append(threading.current_thread().name)
        time.sleep(0.6)  # an import that takes a while
        lazy._module = module_after_import
        lazy._ready.set()

    monkeypatch.setattr(lazy, "_prepare", slow_prepare)
    stalls: list[float] = []

    async def ticker() -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            stalls.append(time.perf_counter() - t - 0.01)

    tick = asyncio.ensure_future(ticker())
    lazy.preload()  # after the first frame
    lazy.preload()  # once only
    module: Any = await lazy.litellm_ready()  # a prompt sent before the import finished
    tick.cancel()
    assert module is module_after_import
    assert started == ["pitui-litellm-import"]
    assert max(stalls) < 0.2
    assert len(stalls) > 20  # the loop kept running meanwhile
