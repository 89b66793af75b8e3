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


def test_a_program_that_quits_while_the_import_runs_is_not_held_up_by_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Waiting for the import holds no thread: ``asyncio.run`` (which joins its executor's
    threads on the way out) returns while the import still runs."""
    monkeypatch.setattr(lazy, "_ready", threading.Event())
    monkeypatch.setattr(lazy, "_preload", None)
    monkeypatch.setattr(lazy, "_module", None)
    finished = threading.Event()

    def stuck_prepare() -> None:
        finished.wait(20)  # an import that takes long (ends on its own, so nothing leaks)
        finished.set()
        lazy._ready.set()

    monkeypatch.setattr(lazy, "_prepare", stuck_prepare)

    async def prompt_then_quit() -> None:
        lazy.preload()  # after the first frame
        waiting = asyncio.ensure_future(lazy.litellm_ready())  # a prompt sent at once
        await asyncio.sleep(0.1)
        waiting.cancel()  # Ctrl+Q aborts the run
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(prompt_then_quit())
    assert not finished.is_set(), "the program waited for the import to end"
    finished.set()
