"""The TUI benchmark harness on a busy machine: a tmux control client that died is replaced
(it used to end its group with BrokenPipeError), and every row of the report has a figure or
says why it has none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.tmux import require_tmux

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import tui_bench  # noqa: E402
from tui_terminal import Terminal  # noqa: E402


@pytest.fixture
def term() -> Terminal:
    require_tmux()
    terminal = Terminal(80, 24).start()
    yield terminal
    terminal.close()


@pytest.mark.timeout(120)
def test_a_dead_control_client_is_replaced(term: Terminal) -> None:
    assert term.command("display", "-p", "one") == ["one"]
    assert term._control is not None
    os.kill(term._control.pid, signal.SIGKILL)
    term._control.wait(timeout=10)
    # The next command (a write to the dead client's pipe: BrokenPipeError before) works.
    assert term.command("display", "-p", "two") == ["two"]
    assert term.reconnects == 1
    term.run(["sh", "-c", "echo still-here; sleep 100"], env={"PATH": os.environ["PATH"]}, cwd="/")
    term.wait_text("still-here", timeout=30)


@pytest.mark.timeout(120)
def test_a_dead_tmux_server_is_started_again(term: Terminal) -> None:
    subprocess.run(["tmux", "-S", term.socket, "kill-server"], check=False, timeout=30)
    assert term.command("display", "-p", "#{window_width}x#{window_height}") == ["80x24"]
    assert term.reconnects == 1


def test_every_row_has_a_figure_or_a_reason() -> None:
    results = tui_bench.Results()
    results.extra.update(
        groups_run=["first", "stream", "session"], sizes_run=["20k"], agents_run=["pitui", "pi"]
    )
    results.add("quit_after_request", "-", "pitui", 0.05)
    results.add("quit_after_request", "-", "pi", 0.08)
    try:
        raise BrokenPipeError(32, "Broken pipe")
    except BrokenPipeError as exc:
        results.error("stream", "pitui", exc)
    try:
        raise tui_bench.TerminalError("timed out after 60 s waiting for 'zqreply'")
    except tui_bench.TerminalError as exc:
        results.error("session 20k", "pi", exc)
    rows = {(r["measure"], r["key"]): r for r in tui_bench.evaluate(results)}
    for row in rows.values():
        assert row["pitui"] is not None or row["note"], row
    quit_row = rows[("quit_after_request", "-")]
    assert quit_row["verdict"] == "PASS" and not quit_row["note"].startswith("not measured")
    echo = rows[("key_echo_stream", "-")]["note"]
    assert echo.startswith("not measured: pitui: stream: BrokenPipeError")
    assert "throughput not run" in rows[("stream_total", "5k")]["note"]
    tree = rows[("tree_open", "20k")]["note"]
    assert "pi: session 20k: TerminalError: timed out" in tree
    assert "size 200k not run" in rows[("first_frame", "200k")]["note"]
