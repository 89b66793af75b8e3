"""The file tools on paths that are not regular files (a FIFO blocks ``open`` until someone
opens the other end; ``/dev/zero`` reads without end): refused at once with a sentence the
model can read, and the event loop keeps running meanwhile (Esc must still work)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pitui.agent.tools import EditTool, ReadTool, ToolContext, ToolResult, WriteTool, execute


async def run_with_ticker(coro: Any) -> tuple[ToolResult, int]:
    """Run a tool call while a ticker counts event-loop turns (a blocked loop counts none)."""
    ticks = 0
    stop = False

    async def ticker() -> None:
        nonlocal ticks
        while not stop:
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)
    try:
        result = await asyncio.wait_for(coro, 5)
    finally:
        stop = True
        await task
    return result, ticks


@pytest.fixture
def fifo(ctx: ToolContext) -> Path:
    path = ctx.cwd / "pipe"
    os.mkfifo(path)
    return path


CALLS = {
    "write": (WriteTool(), lambda p: {"path": str(p), "content": "x"}),
    "edit": (EditTool(), lambda p: {"path": str(p), "edits": [{"oldText": "a", "newText": "b"}]}),
    "read": (ReadTool(), lambda p: {"path": str(p)}),
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("tool", sorted(CALLS))
async def test_a_fifo_is_refused_at_once(ctx: ToolContext, fifo: Path, tool: str) -> None:
    instance, args = CALLS[tool]
    started = time.monotonic()
    result, ticks = await run_with_ticker(execute(instance, args(fifo), ctx))
    assert time.monotonic() - started < 2
    assert result.is_error
    assert result.text.startswith(f"{fifo} is a named pipe (FIFO), not a regular file")
    assert result.text.endswith(".") and "\n" not in result.text
    assert ticks >= 1


@pytest.mark.parametrize("tool", ["write", "edit", "read"])
async def test_devices_are_refused(ctx: ToolContext, tool: str) -> None:
    link = ctx.cwd / "zero"
    link.symlink_to("/dev/null")
    instance, args = CALLS[tool]
    result = await execute(instance, args(link), ctx)
    assert result.is_error
    assert result.text.startswith(f"{link} is a character device, not a regular file")


_EDIT_DEV_ZERO = textwrap.dedent(
    """
    import asyncio, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from pitui.agent.tools import EditTool, ToolContext, execute
    link = Path(sys.argv[1])
    ctx = ToolContext(cwd=link.parent, output_dir=link.parent / "out")
    args = {"path": str(link), "edits": [{"oldText": "a", "newText": "b"}]}
    result = asyncio.run(execute(EditTool(), args, ctx))
    print(result.text)
    """
)


@pytest.mark.timeout(60)
@pytest.mark.slow
def test_editing_a_symlink_to_dev_zero_does_not_read_forever(ctx: ToolContext) -> None:
    link = ctx.cwd / "zeros.txt"
    link.symlink_to("/dev/zero")
    child = subprocess.run(
        [sys.executable, "-c", _EDIT_DEV_ZERO, str(link)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert child.returncode == 0, child.stderr[-800:]
    assert (
        child.stdout.strip()
        == f"{link} is a character device, not a regular file; edit only works on regular files."
    )


async def test_an_oversized_file_is_not_loaded_for_editing(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pitui.agent.tools.edit as edit_module

    monkeypatch.setattr(edit_module, "MAX_EDIT_BYTES", 1000)
    big = ctx.cwd / "big.txt"
    big.write_text("a" * 2000)
    result = await execute(
        EditTool(), {"path": str(big), "edits": [{"oldText": "a", "newText": "b"}]}, ctx
    )
    assert result.is_error
    assert result.text == (
        f"{big} is too large to edit (2.0 KB; the limit is 1000 B); use bash (for example sed) "
        "instead. The file was not changed."
    )
    assert big.read_text() == "a" * 2000


async def test_writing_a_big_file_does_not_block_the_event_loop(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pitui.agent.tools.write as write_module

    real = write_module.write_text_file

    def slow(path: Path, data: bytes) -> None:
        time.sleep(0.3)  # a slow disk
        real(path, data)

    monkeypatch.setattr(write_module, "write_text_file", slow)
    result, ticks = await run_with_ticker(
        execute(WriteTool(), {"path": "out.txt", "content": "hello"}, ctx)
    )
    assert not result.is_error
    assert ticks >= 10  # the loop kept turning while the file was written
