"""The bash tool: output and exit codes, timeouts, cancellation, no orphans, truncation."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from pitui.agent.tools import (
    BashTool,
    OutputWindow,
    ToolContext,
    ToolResult,
    execute,
    new_output_dir,
    remove_empty_output_dirs,
    run_command,
)


async def bash(ctx: ToolContext, command: str, **args: Any) -> ToolResult:
    return await execute(BashTool(), {"command": command, **args}, ctx)


def live_members(pgid: int) -> list[int]:
    """Pids of running (non-zombie) processes in group ``pgid``, read from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            data = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def pid_running(pid: int) -> bool:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def wait_for_file(path: Path, seconds: float = 5.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            text = path.read_text()
            if text.endswith("\n"):
                return text
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} was not written")


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo hello")
    assert not result.is_error
    assert result.text == "hello\n\nexit code: 0"
    assert result.details == {"exitCode": 0, "truncated": False, "timedOut": False}


async def test_non_zero_exit_is_an_error_result(ctx: ToolContext) -> None:
    """As pi: the model sees a failing command as a failed tool call (isError)."""
    result = await bash(ctx, "echo failing; exit 3")
    assert result.is_error
    assert result.text == "failing\n\nexit code: 3"
    assert result.details is not None
    assert result.details["exitCode"] == 3


async def test_no_output(ctx: ToolContext) -> None:
    assert (await bash(ctx, "true")).text == "(no output)\n\nexit code: 0"


async def test_stderr_is_merged_in_order(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo out1; echo err1 >&2; echo out2; echo err2 >&2")
    assert result.text == "out1\nerr1\nout2\nerr2\n\nexit code: 0"


async def test_cwd_is_respected(ctx: ToolContext) -> None:
    result = await bash(ctx, "pwd; ls")
    (ctx.cwd / "marker.txt").write_text("")
    assert result.text.startswith(f"{ctx.cwd}\n")
    assert "marker.txt" in (await bash(ctx, "ls")).text


async def test_stdin_is_empty(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat; read line || echo eof", timeout=5)
    assert result.text == "eof\n\nexit code: 0"


async def test_signal_exit_code(ctx: ToolContext) -> None:
    result = await bash(ctx, "kill -9 $$")
    assert result.details is not None
    assert result.details["exitCode"] == 137


async def test_invalid_utf8_is_replaced(ctx: ToolContext) -> None:
    result = await bash(ctx, r"printf 'a\377b\n'")
    assert result.text == "a\ufffdb\n\nexit code: 0"


async def test_escapes_are_not_stripped(ctx: ToolContext) -> None:
    result = await bash(ctx, r"printf '\033[31mred\033[0m\n'")
    assert result.text == "\x1b[31mred\x1b[0m\n\nexit code: 0"


async def test_timeout_kills_the_process_group(ctx: ToolContext) -> None:
    pids = ctx.cwd / "pids"
    start = time.monotonic()
    result = await bash(
        ctx,
        f"echo $$ > {pids}; sleep 100 & echo $! >> {pids}; sleep 100",
        timeout=0.5,
    )
    assert time.monotonic() - start < 4
    assert result.is_error
    assert result.text == "(no output)\n\nCommand timed out after 0.5 seconds"
    assert result.details == {"exitCode": None, "truncated": False, "timedOut": True}
    shell, child = (int(x) for x in pids.read_text().split())
    assert live_members(shell) == []
    assert not pid_running(child)


async def test_timeout_keeps_output_so_far(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo started; sleep 100", timeout=1)
    assert result.is_error
    assert result.text == "started\n\nCommand timed out after 1 second"


async def test_sigterm_ignoring_children_get_sigkill(ctx: ToolContext) -> None:
    pids = ctx.cwd / "pids"
    start = time.monotonic()
    result = await bash(ctx, f"trap '' TERM; echo $$ > {pids}; sleep 100 & sleep 100", timeout=0.3)
    elapsed = time.monotonic() - start
    assert result.is_error
    assert 2.0 <= elapsed < 5
    assert live_members(int(pids.read_text())) == []


async def test_cancellation_kills_the_process_group(ctx: ToolContext) -> None:
    pids = ctx.cwd / "pids"
    task = asyncio.create_task(bash(ctx, f"sleep 100 & echo $$ $! > {pids}; sleep 100", timeout=60))
    shell, child = (int(x) for x in (await wait_for_file(pids)).split())
    assert pid_running(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_members(shell) == []
    assert not pid_running(child)


async def test_early_cancellation_leaves_nothing_running(ctx: ToolContext) -> None:
    """Cancel at many points, including while the shell is still being started."""
    for i in range(20):
        pids = ctx.cwd / f"pids{i}"
        task = asyncio.create_task(bash(ctx, f"echo $$ > {pids}; sleep 100 & sleep 100"))
        if i:
            await asyncio.sleep(i * 0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.02)  # let a shell that was mid-start write its pid
        if pids.exists() and pids.read_text().strip():
            assert live_members(int(pids.read_text())) == []


async def test_background_child_holding_the_output_is_stopped(ctx: ToolContext) -> None:
    pids = ctx.cwd / "pids"
    start = time.monotonic()
    result = await bash(ctx, f"echo $$ > {pids}; sleep 100 & echo done")
    assert time.monotonic() - start < 4
    assert result.text == "done\n\nexit code: 0"
    assert live_members(int(pids.read_text())) == []


async def test_background_child_with_redirected_output_keeps_running(ctx: ToolContext) -> None:
    result = await bash(ctx, "sleep 30 > /dev/null 2>&1 & echo $!")
    child = int(result.text.split("\n")[0])
    try:
        assert result.details is not None
        assert result.details["exitCode"] == 0
        assert pid_running(child)
    finally:
        os.kill(child, signal.SIGKILL)


async def test_detached_child_holding_the_output_does_not_block(ctx: ToolContext) -> None:
    start = time.monotonic()
    result = await bash(ctx, "setsid sleep 30 & echo $!")
    child = int(result.text.split("\n")[0])
    try:
        assert time.monotonic() - start < 5
        assert result.details is not None
        assert result.details["exitCode"] == 0
    finally:
        os.kill(child, signal.SIGKILL)


async def test_huge_output_is_truncated_and_saved(ctx: ToolContext) -> None:
    result = await bash(ctx, "yes | head -n 500000")
    assert not result.is_error
    assert result.details is not None
    assert result.details["truncated"] is True
    full = Path(result.details["fullOutputPath"])
    assert full.parent == ctx.output_dir
    assert stat.S_IMODE(full.stat().st_mode) == 0o600
    data = full.read_bytes()
    assert data.count(b"\n") == 500000
    assert data == b"y\n" * 500000
    text = result.text
    assert text.endswith(f"\n\n[Output truncated. Full output: {full}]\n\nexit code: 0")
    body = text.split("\n\n[Output truncated")[0]
    lines = body.split("\n")
    assert lines.count("... [498000 lines truncated] ...") == 1
    marker = lines.index("... [498000 lines truncated] ...")
    assert lines[:marker] == ["y"] * 400
    assert lines[marker + 1 :] == ["y"] * 1600


async def test_truncation_keeps_head_and_tail_lines(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 10000")
    body = result.text.split("\n\n[Output truncated")[0].split("\n")
    assert body[:400] == [str(n) for n in range(1, 401)]
    assert body[400] == "... [8000 lines truncated] ..."
    assert body[401:] == [str(n) for n in range(8401, 10001)]
    assert len("\n".join(body).encode()) <= 50 * 1024 + 100


async def test_output_at_the_limit_is_not_truncated(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 2000")
    assert result.details is not None
    assert result.details["truncated"] is False
    assert result.text == "\n".join(str(n) for n in range(1, 2001)) + "\n\nexit code: 0"
    assert not ctx.output_dir.exists() or not any(ctx.output_dir.iterdir())


async def test_byte_limit_with_long_lines(ctx: ToolContext) -> None:
    # 30 lines of 4000 characters: 120 KB in few lines.
    result = await bash(ctx, 'for i in $(seq 1 30); do printf "$i%.0s" $(seq 4000); echo; done')
    body = result.text.split("\n\n[Output truncated")[0]
    assert len(body.encode()) <= 50 * 1024 + 100
    lines = body.split("\n")
    assert lines[0] == "1" * 4000
    assert lines[-1] == "30" * 4000
    marker = next(line for line in lines if line.startswith("... ["))
    shown = len(lines) - 1
    assert marker == f"... [{30 - shown} lines truncated] ..."


async def test_single_huge_line(ctx: ToolContext) -> None:
    result = await bash(ctx, "head -c 300000 /dev/zero | tr '\\0' 'a'")
    assert result.details is not None
    assert result.details["truncated"] is True
    body = result.text.split("\n\n[Output truncated")[0]
    head, marker, tail = body.split("\n")
    assert head == "a" * 10240
    assert tail == "a" * 40960
    assert marker == f"... [{300000 - 10240 - 40960} bytes truncated] ..."


async def test_timeout_argument_validation(ctx: ToolContext) -> None:
    for bad in (0, -1):
        result = await bash(ctx, "true", timeout=bad)
        assert result.is_error
        assert "timeout must be a positive number" in result.text
    result = await bash(ctx, "true", timeout="fast")
    assert result.is_error
    assert "argument 'timeout' must be a number" in result.text
    assert not (await bash(ctx, "true", timeout="5")).is_error


async def test_command_argument_validation(ctx: ToolContext) -> None:
    result = await execute(BashTool(), {}, ctx)
    assert result.is_error
    assert "missing required argument 'command'" in result.text
    result = await bash(ctx, "   ")
    assert result.is_error
    assert result.text == "The command is empty."


async def test_missing_cwd(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path / "gone", output_dir=tmp_path / "out")
    result = await bash(ctx, "true")
    assert result.is_error
    assert "does not exist" in result.text


async def test_run_command_streams_output(tmp_path: Path) -> None:
    chunks: list[str] = []
    result = await run_command(
        "echo één; echo twee",
        cwd=tmp_path,
        output_dir=tmp_path / "out",
        on_output=chunks.append,
    )
    assert "".join(chunks) == "één\ntwee\n"
    assert result.exit_code == 0
    assert result.total_lines == 2


def test_output_window_memory_is_bounded(tmp_path: Path) -> None:
    window = OutputWindow(tmp_path / "out")
    chunk = (b"x" * 99 + b"\n") * 655  # ~64 KB
    for _ in range(1600):  # ~100 MB
        window.feed(chunk)
        assert len(window._buffer) <= 50 * 1024 + len(chunk)
        assert len(window._tail) <= 2 * window.tail_bytes + 1 + len(chunk)
        assert len(window._head) <= window.head_bytes
    window.close()
    assert window.full_output_path is not None
    assert window.full_output_path.stat().st_size == 1600 * len(chunk)
    assert window.total_lines == 1600 * 655
    text = window.render()
    assert len(text.encode()) <= 50 * 1024 + 100


def test_output_window_without_trailing_newline(tmp_path: Path) -> None:
    window = OutputWindow(tmp_path / "out")
    window.feed(b"a\nb")
    assert window.total_lines == 2
    assert window.render() == "a\nb"
    assert not window.truncated


async def test_output_dir_is_created_only_for_saved_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = new_output_dir()
    assert folder.parent == tmp_path and not folder.exists()
    ctx = ToolContext(cwd=tmp_path, output_dir=folder)
    await bash(ctx, "echo small")
    assert not folder.exists()
    result = await bash(ctx, "seq 1 100000")
    assert result.details is not None and Path(result.details["fullOutputPath"]).parent == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    remove_empty_output_dirs()
    assert folder.is_dir()  # it holds an output the model was told about
    Path(result.details["fullOutputPath"]).unlink()
    remove_empty_output_dirs()
    assert not folder.exists()


async def test_a_planted_output_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = tmp_path / "pitui-output-planted"
    planted.symlink_to(elsewhere)
    result = await bash(ToolContext(cwd=tmp_path, output_dir=planted), "seq 1 100000")
    assert "[Output truncated. The full output could not be saved: " in result.text
    assert list(elsewhere.iterdir()) == []


async def test_keys_are_redacted_in_the_full_output_file_as_in_the_result(
    ctx: ToolContext,
) -> None:
    """A long output that prints the key (here handed to the command on purpose): the saved
    full output holds the redaction mark, never the key, even where a key is split between
    two reads of the pipe."""
    secret = "sk-live-" + "7" * 40
    ctx.secrets = {secret: "OPENAI_API_KEY"}
    ctx.env = {"PATH": os.environ.get("PATH", ""), "THE_KEY": secret}
    command = 'for i in $(seq 4000); do printf "line %05d %s\\n" "$i" "$THE_KEY"; done'
    result = await bash(ctx, command)
    assert result.details is not None and result.details["truncated"] is True
    data = Path(result.details["fullOutputPath"]).read_bytes()
    assert secret.encode() not in data and b"sk-live-" not in data
    assert data.count(b"[redacted OPENAI_API_KEY]") == 4000
    assert data.count(b"\n") == 4000
    assert secret not in result.text and "[redacted OPENAI_API_KEY]" in result.text


def test_the_full_output_redaction_catches_a_key_split_across_pieces(tmp_path: Path) -> None:
    from pitui.agent.tools.bash import OutputWindow
    from pitui.agent.tools.environment import Redactor

    secret = "ghp_" + "x" * 36
    window = OutputWindow(
        tmp_path, max_lines=2, max_bytes=64, redactor=Redactor({secret: "GITHUB_TOKEN"})
    )
    stream = (b"start\n" * 5 + b"token=" + secret.encode() + b"\n") * 3 + b"end " + b"ghp_"
    for i in range(0, len(stream), 7):  # pieces that cut the key anywhere
        window.feed(stream[i : i + 7])
    window.close()
    assert window.full_output_path is not None
    data = window.full_output_path.read_bytes()
    assert data == stream.replace(secret.encode(), b"[redacted GITHUB_TOKEN]")
