"""Pilot tests for tool blocks: bash output streamed live (sanitized, bounded, redacted), an
abort that keeps what was printed, edits as diffs, writes as previews, Ctrl+O for all."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, text, tool_call
from support.screens import run_finished, terminal_output, wait_for

from pitui.ui.app import PituiApp
from pitui.ui.screens.help import KEYS
from pitui.ui.widgets.chat import ChatView, ToolBlock

SIZE = (100, 30)
SECRET = "ghp_live_output_secret_31415926"


def shown(block: ToolBlock, part: str = ".tool-output") -> str:
    return str(block.query_one(part).visual)


def running_block(app: PituiApp) -> ToolBlock | None:
    blocks = [b for b in app.query(ToolBlock) if b.running]
    return blocks[0] if blocks else None


# ---------------------------------------------------------------------------------- live bash


@pytest.mark.slow
async def test_each_line_of_a_slow_loop_shows_as_it_comes(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    command = "for i in 1 2 3 4; do echo step $i; sleep 0.6; done"
    llm.script(tool_call("bash", {"command": command}), text("Four steps."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"loop", "enter")
        for i in (1, 2, 3, 4):
            await wait_for(pilot, lambda i=i: f"step {i}" in shown(running_block(app) or _none))
            block = running_block(app)
            assert block is not None, f"the command ended before step {i} was shown"
            lines = shown(block).splitlines()
            assert lines == [f"step {n}" for n in range(1, i + 1)]
            assert "…" in str(block.query_one(".tool-header").visual)
        await run_finished(pilot, app)
        block = app.query_one(ToolBlock)
        assert not block.running
        assert shown(block).splitlines()[-1] == "exit code: 0"


class _NoBlock:
    def query_one(self, _: str) -> Any:
        return type("V", (), {"visual": ""})()


_none: Any = _NoBlock()


@pytest.mark.slow
async def test_escape_keeps_what_the_command_printed(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(tool_call("bash", {"command": "echo one; echo two; sleep 30"}))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "two" in shown(running_block(app) or _none))
        await pilot.press("escape")
        await run_finished(pilot, app)
        block = app.query_one(ToolBlock)
        assert not block.running and block.has_class("-error")
        assert shown(block).splitlines() == ["one", "two", "", "Command aborted"]
        stored = app.store.data(app.store.path_to()[-1])["message"]
        assert stored["content"][0]["text"] == "one\ntwo\n\nCommand aborted"


@pytest.mark.slow
async def test_live_output_is_sanitized_and_redacted(
    app_factory: Callable[..., PituiApp],
    llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    # The key is printed in two parts, 0.3 s apart; the command holds it only reversed.
    backwards = 's=$1; for ((i=${#s}-1; i>=0; i--)); do printf %s "${s:i:1}"; done'
    command = (
        r"printf '\033[31mred\033[0m\033]0;PWNED-TITLE\007\033]52;c;cHduZWQ=\007\033[2J"
        rf"\033[5A moved\n'; rev() {{ {backwards}; }}; printf 'key='; rev {SECRET[:10][::-1]};"
        rf" sleep 0.3; rev {SECRET[10:][::-1]}; echo; sleep 30"
    )
    llm.script(tool_call("bash", {"command": command}))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "key=" in shown(running_block(app) or _none))
        # The start of the key is held back until the rest shows whether it is one.
        assert SECRET[:10] not in terminal_output(app)
        assert SECRET[:10] not in shown(running_block(app) or _none)
        await wait_for(pilot, lambda: "[redacted" in shown(running_block(app) or _none))
        block = running_block(app)
        assert block is not None
        content = block.query_one(".tool-output").visual
        assert str(content) == "red moved\nkey=[redacted GITHUB_TOKEN]"
        assert any("red" in str(span.style) for span in content.spans)  # type: ignore[attr-defined]
        output = terminal_output(app)
        assert "\x1b]52" not in output and "\x1b]0;" not in output
        assert "\x1b[5A" not in output and "\x1b[2J" not in output
        assert SECRET[:10] not in output and SECRET[10:] not in output
        await pilot.press("escape")
        await run_finished(pilot, app)
        assert SECRET[10:] not in terminal_output(app)


@pytest.mark.slow
async def test_a_flood_of_output_keeps_a_bounded_tail_on_screen(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(tool_call("bash", {"command": "seq 1 100000; sleep 30"}))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: "100000" in shown(running_block(app) or _none))
        block = running_block(app)
        assert block is not None
        # Collapsed: the last lines and how many are hidden.
        lines = shown(block).splitlines()
        assert lines == ["▲ 99995 earlier lines", *(str(n) for n in range(99996, 100001))]
        assert block.live_lines == 100000
        more = shown(block, ".tool-more")
        assert more == "▼ show all lines (click or Enter to expand)"
        # Expanded (a click): the kept tail (bounded) with a note of what came before.
        await pilot.click(block, offset=(4, 0))
        await pilot.pause(0.1)
        assert block.expanded
        lines = shown(block).splitlines()
        assert len(lines) == 201
        assert lines[0] == "… 99800 earlier lines (all of them are in the result at the end)"
        assert lines[1:] == [str(n) for n in range(99801, 100001)]
        await pilot.press("escape")
        await run_finished(pilot, app)
        stored = app.query_one(ToolBlock)
        assert stored is not block and stored.expanded  # the result stays expanded
        assert shown(stored).splitlines()[-1] == "Command aborted"


# ---------------------------------------------------------------------------------- edits


async def test_an_edit_shows_a_numbered_diff_not_json(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    target = tmp_path / "app.py"
    target.write_text("import os\nimport sys\n\n\ndef main():\n    pass\n", encoding="utf-8")
    edit = {"path": str(target), "oldText": "import sys\n", "newText": "import json\nimport re\n"}
    llm.script(tool_call("edit", edit), text("Edited."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"edit", "enter")
        await run_finished(pilot, app)
        block = app.query_one(ToolBlock)
        body = block.query_one(".tool-body").visual
        assert str(body).splitlines() == [
            "1   import os",
            "2 - import sys",
            "2 + import json",
            "3 + import re",
            "4   ",
            "5   ",
            "6   def main():",
        ]
        styles = " ".join(str(s.style) for s in body.spans)  # type: ignore[attr-defined]
        assert "red" in styles and "green" in styles
        assert not block.query_one(".tool-args").display  # no escaped JSON anywhere
        screen = terminal_output(app)
        assert '"oldText"' not in screen and "\\n" not in screen


async def test_a_failed_edit_shows_the_intended_change_without_numbers(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("alpha\n", encoding="utf-8")
    edit = {"path": str(target), "edits": [{"oldText": "missing\n", "newText": "found\n"}]}
    llm.script(tool_call("edit", edit), text("It failed."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"edit", "enter")
        await run_finished(pilot, app)
        block = app.query_one(ToolBlock)
        assert block.has_class("-error")
        assert shown(block, ".tool-body").splitlines() == ["- missing", "+ found"]
        assert shown(block).startswith("Could not find the oldText")


async def test_pi_numbered_diffs_and_hostile_edits_stay_text(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    store = app.store
    hostile = "x = 1\x1b]52;c;cHduZWQ=\x07\x1b[2J [bold]b[/] " + "y" * 5000
    calls = [
        {
            "type": "toolCall",
            "id": "pi",
            "name": "edit",
            "arguments": {"path": "a.ts", "oldText": "a", "newText": "b"},
        },
        {
            "type": "toolCall",
            "id": "bad",
            "name": "edit",
            "arguments": {"path": "b.py", "oldText": hostile, "newText": "z\n" * 100_000},
        },
    ]
    store.append_message({"role": "assistant", "content": calls, "stopReason": "toolUse"})
    pi_diff = "  9 keep\n-10 const a = 1;\n+10 const b = 2;\n 11 tail\n    ..."
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "pi",
            "toolName": "edit",
            "content": [{"type": "text", "text": "Successfully replaced text in a.ts."}],
            "details": {"diff": pi_diff, "firstChangedLine": 10},
            "isError": False,
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "bad",
            "toolName": "edit",
            "content": [{"type": "text", "text": "Could not edit."}],
            "isError": True,
        }
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        pi_block, bad = list(app.query(ToolBlock))
        assert shown(pi_block, ".tool-body").splitlines() == [
            " 9   keep",
            "10 - const a = 1;",
            "10 + const b = 2;",
            "11   tail",
            "   ⋯",
        ]
        body = shown(bad, ".tool-body").splitlines()
        assert body[0].startswith("- x = 1 [bold]b[/] yyy") and body[0].endswith("…")
        assert len(body[0]) == 401  # the preview cuts a huge line
        bad.expanded = True
        await pilot.pause()
        body = shown(bad, ".tool-body").splitlines()
        assert len(body) == 401 and body[-1] == "… 99601 more lines"  # bounded when expanded
        assert len(body[0]) == len("- ") + 1001
        output = terminal_output(app)
        assert "\x1b]52" not in output and "\x1b[2J" not in output


async def test_a_write_shows_the_first_lines_and_a_line_count(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    content = "".join(f"line {n}\n" for n in range(1, 31))
    llm.script(tool_call("write", {"path": str(tmp_path / "new.txt"), "content": content}))
    llm.script(text("Written."))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"write", "enter")
        await run_finished(pilot, app)
        block = app.query_one(ToolBlock)
        assert shown(block, ".tool-args") == "30 lines, 231 B"
        body = shown(block, ".tool-body").splitlines()
        assert body == [f"{n:>2} line {n}" for n in range(1, 13)]
        assert block.hidden_lines == 18
        block.expanded = True
        await pilot.pause()
        assert len(shown(block, ".tool-body").splitlines()) == 30


# ---------------------------------------------------------------------------------- Ctrl+O


@pytest.mark.slow
async def test_ctrl_o_expands_and_collapses_every_tool_block(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    many = "seq 1 20"
    llm.script(
        tool_call("bash", {"command": many}),
        tool_call("bash", {"command": "echo short"}),
        tool_call("bash", {"command": "seq 1 30"}),
        text("done"),
    )
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: len(app.query(ToolBlock)) >= 2)
        await run_finished(pilot, app)
        blocks = list(app.query(ToolBlock))
        long_ones = [b for b in blocks if b.collapsible]
        assert len(blocks) == 3 and len(long_ones) == 2
        assert not any(b.expanded for b in blocks)
        await pilot.press("ctrl+o")  # the focus stays in the editor
        await pilot.pause()
        assert all(b.expanded for b in long_ones)
        assert len(shown(long_ones[1]).splitlines()) == 32
        # Blocks shown later follow the toggle (a rebuild from the store).
        await app.query_one(ChatView).rebuild()
        await pilot.pause()
        assert all(b.expanded for b in app.query(ToolBlock) if b.collapsible)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not any(b.expanded for b in app.query(ToolBlock))
        assert ("Ctrl+O", "expand or collapse all tool blocks") in KEYS


def test_live_tail_is_bounded_and_converts_each_line_once() -> None:
    from pitui.ui.live_output import LIVE_LINES, LiveTail

    tail = LiveTail()
    for n in range(1, 1001):
        tail.feed(f"\x1b[32m{n}\x1b[0m\n")
    tail.feed("progress 10%\rprogress 20%")  # a line being rewritten in place
    first = tail.tail(3)
    assert [line.plain for line in first] == ["999", "1000", "progress 20%"]
    assert str(first[0].spans[0].style) == "color(2)"  # green
    again = tail.tail(3)
    assert again[0] is first[0]  # not converted again
    assert tail.line_count == 1001 and tail.dropped == 1000 - LIVE_LINES
    tail.feed("x" * 5000 + "\n")  # ends the rewritten line: what the terminal shows, cut
    assert tail.tail(1)[0].plain == "progress 20%" + "x" * (1000 - len("progress 10%\r") - 12)
    tail.feed("fresh\n", omitted_lines=500, cut=True)
    assert [line.plain for line in tail.tail(5)] == ["fresh"]
    assert tail.line_count == 1000 + 1 + 500 + 1
