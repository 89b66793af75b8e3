"""litellm is imported (and warmed up) off the event loop: awaiting it never stalls the loop,
and a request made before the background import finished waits for it instead of importing
on the loop."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from pitui.llm import lazy

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_import_runs_without_collections_and_what_it_leaves_is_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """litellm's import leaves ~500k objects for the life of the process and almost no
    garbage: no collector passes while it runs (each held the UI 40-210 ms), and none over what
    it left afterwards (250-340 ms each, several per streamed reply)."""
    monkeypatch.setattr(lazy, "_ready", threading.Event())
    monkeypatch.setattr(lazy, "_preload", None)
    monkeypatch.setattr(lazy, "_module", None)
    seen: dict[str, Any] = {}

    class Module:
        """Stands for what the import made: it refers to itself, as modules do."""

        def __init__(self) -> None:
            self.me = self

    def prepare() -> None:
        seen["collecting while importing"] = gc.isenabled()
        module = Module()
        seen["module"] = weakref.ref(module)
        lazy._module = module
        lazy._ready.set()

    monkeypatch.setattr(lazy, "_prepare", prepare)
    gc.unfreeze()
    try:
        lazy.preload()
        assert lazy._preload is not None
        lazy._preload.join(5)
        assert seen["collecting while importing"] is False
        assert gc.isenabled()
        lazy._module = None  # unreachable now, but frozen: no full pass walks it again
        gc.collect()
        assert seen["module"]() is not None
    finally:
        gc.unfreeze()
    gc.collect()
    assert seen["module"]() is None


@pytest.mark.slow
def test_litellm_is_imported_without_copying_messages_for_logging(tmp_path: Path) -> None:
    """litellm copies every string of a request's messages for logging callbacks after each
    request (pitui has none; ~8 ms a request at 1,800 messages): off, unless the environment
    says otherwise. In a process of its own: litellm reads the setting once, at its import."""
    code = (
        "from pitui.llm import lazy\n"
        "lazy.litellm()\n"
        "from litellm.constants import MAX_BASE64_LENGTH_FOR_LOGGING as limit\n"
        "print(limit)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MAX_BASE64_LENGTH_FOR_LOGGING"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, timeout=120
    )
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]
    assert run.stdout.decode().split() == ["0"]
    env["MAX_BASE64_LENGTH_FOR_LOGGING"] = "64"  # the user's own setting wins
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, timeout=120
    )
    assert run.stdout.decode().split() == ["64"]
