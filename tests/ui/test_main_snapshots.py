"""Snapshot tests of the main screen (SVGs under ``snapshots/test_main_snapshots/``).

Synchronous on purpose: ``snap_compare`` runs its own event loop. Everything shown is fixed:
fixture sessions (or entries written here), the test clock, no cursor blink, no model calls.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import fixed_clock
from textual.pilot import Pilot

from pitui.agent.session import AgentSession
from pitui.agent.workspace import Workspace
from pitui.checkpoint.settings import read_workspace_settings
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import ChatView, SummaryBlock, ToolBlock

SIZE = (110, 34)
WINDOW_200K = {"models": {"openai/test-model": {"contextWindow": 200_000}}}
COMPACTION = "pi-v3-compaction-and-system-prompt.jsonl"
AFTER_SECOND_COMPACTION = "7bda0a5e"  # the reply right after the second compaction

HOSTILE = (
    "markup [bold]not bold[/] and [x[0]] and [/ "
    "\x1b[31mred\x1b[0m cursor\x1b[2;5Hmove\x1b[5A "
    "title\x1b]0;PWNED-TITLE\x07 clip\x1b]52;c;cHduZWQ=\x07 done"
)

COLOURED_OUTPUT = "\n".join(
    [
        "============================= test session starts ==============================",
        *(f"tests/test_{n}.py \x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m" for n in range(8)),
        "tests/test_tree.py \x1b[31mF\x1b[0m",
        "\x1b[31mFAILED\x1b[0m tests/test_tree.py::test_lazy - AssertionError",
        "\x1b[31m=== \x1b[1m1 failed\x1b[0m, \x1b[32m24 passed\x1b[0m\x1b[31m in 0.42s ===\x1b[0m",
    ]
)


def _scroll_to(pilot: Pilot[Any], widget: Any) -> None:
    pilot.app.query_one(ChatView).scroll_to_widget(widget, top=True, animate=False)


def _compaction_app(app_factory: Callable[..., PituiApp]) -> PituiApp:
    app = app_factory(COMPACTION, settings=WINDOW_200K)
    app.store.branch(AFTER_SECOND_COMPACTION)
    return app


def _tool_session(store: SessionStore) -> None:
    store.append_message(
        {"role": "user", "content": [{"type": "text", "text": "Run the tests, please."}]}
    )
    call = {
        "type": "toolCall",
        "id": "call_1",
        "name": "bash",
        "arguments": {"command": "python -m pytest -q tests/"},
    }
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Running the suite."}, call],
            "stopReason": "toolUse",
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "bash",
            "content": [{"type": "text", "text": COLOURED_OUTPUT + "\n\nexit code: 1"}],
            "isError": False,
        }
    )
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "One test fails: `test_lazy`."}],
            "stopReason": "stop",
        }
    )


def _hostile_session(store: SessionStore) -> None:
    store.append_message({"role": "user", "content": [{"type": "text", "text": HOSTILE}]})
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat x"}}
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": HOSTILE}, call],
            "stopReason": "toolUse",
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": HOSTILE}],
            "isError": False,
        }
    )
    store.append_message(
        {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": HOSTILE}
    )


def test_main_screen_mid_conversation(
    snap_compare: Any, app_factory: Callable[..., PituiApp]
) -> None:
    """A compacted session: the compaction block (collapsed), a user message and the reply."""
    assert snap_compare(_compaction_app(app_factory), terminal_size=SIZE)


def test_compaction_block_expanded(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    async def expand(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        # The newest screenful is mounted first, the rest just after: wait for all of it (the
        # scrollbar's thumb depends on the whole height).
        await pilot.app.query_one(ChatView).wait_idle()
        await pilot.pause()
        block = pilot.app.query(SummaryBlock).last()
        block.collapsed = False
        # The summary's Markdown mounts its parts over the next frames (a loaded machine
        # takes longer): the scrollbar's thumb depends on the height they end up with.
        await _height_settled(pilot)
        _scroll_to(pilot, block)
        await _height_settled(pilot)

    assert snap_compare(_compaction_app(app_factory), terminal_size=SIZE, run_before=expand)


async def _height_settled(pilot: Pilot[Any]) -> None:
    """Pause until the chat's scrollable height and position stop changing."""
    view = pilot.app.query_one(ChatView)
    seen: list[object] = []
    for _ in range(100):
        await pilot.pause()
        seen.append((view.virtual_size, view.scroll_y))
        if len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3]:
            return


def test_tool_call_expanded(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    """A long bash result, expanded: SGR colours kept."""
    app = app_factory(settings=WINDOW_200K)
    _tool_session(app.store)

    async def expand(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.app.query_one(ChatView).wait_idle()
        await pilot.pause()
        block = pilot.app.query_one(ToolBlock)
        assert block.collapsible
        block.expanded = True
        await pilot.pause()
        _scroll_to(pilot, block)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=expand)


def test_tool_call_collapsed(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory(settings=WINDOW_200K)
    _tool_session(app.store)
    assert snap_compare(app, terminal_size=SIZE)


def test_no_model_screen(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    """Without a model the status line says how to configure one."""
    assert snap_compare(app_factory("pi-v3-branches.jsonl", model=None), terminal_size=SIZE)


def test_hostile_content(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    """Markup-like brackets shown literally; escapes gone; SGR kept only in tool output."""
    app = app_factory(model=None)
    _hostile_session(app.store)
    assert snap_compare(app, terminal_size=SIZE)


def test_completion_hint(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    """Typing a slash command opens the dropdown above the editor: the matches with their
    help, the first highlighted; the editor's border names the keys."""
    app = app_factory(settings=WINDOW_200K)
    assert snap_compare(app, terminal_size=SIZE, press=["slash", "c", "o"])


def test_command_dropdown_moved_at_80x24(
    snap_compare: Any, app_factory: Callable[..., PituiApp]
) -> None:
    """The dropdown at 80x24 over a conversation, Down pressed twice."""
    app = _compaction_app(app_factory)
    assert snap_compare(app, terminal_size=(80, 24), press=["slash", "c", "down", "down"])


def test_new_messages_marker(snap_compare: Any, app_factory: Callable[..., PituiApp]) -> None:
    """Scrolled up (Ctrl+Home from the editor) when new entries arrive: the chat stays put and
    the marker says how to jump to the latest."""
    app = app_factory(settings=WINDOW_200K)
    for i in range(12):
        app.store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"question {i}"}]}
        )
        app.store.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i}"}],
                "stopReason": "stop",
            }
        )

    async def scroll_up_then_append(pilot: Pilot[Any]) -> None:
        view = pilot.app.query_one(ChatView)
        await view.wait_idle()
        await pilot.pause()
        await pilot.press(*"a draft", "ctrl+home")
        await pilot.pause()
        store = pilot.app.store  # type: ignore[attr-defined]
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": "from elsewhere"}]}
        )
        await view.wait_idle()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=scroll_up_then_append)


SIZES = [(80, 24), (120, 40)]
SIZE_IDS = ["80x24", "120x40"]

REPLY_WITH_HEADINGS = (
    "# Plan\n\nThree steps, see [the notes](https://example.com).\n\n## Step one\n\n"
    "Read the tree widget.\n\n### Details\n\nNothing else."
)


def _notices_app(tmp_path: Path) -> PituiApp:
    """A reply with headings and a link, then a prompt refused for want of a model (kept in
    the editor, the notice in the transcript), with ``--approve ask`` in the status line."""
    merged = Settings.from_dict({"ui": {"cursorBlink": False}, **WINDOW_200K})
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))

    def factory(s: SessionStore) -> AgentSession:
        workspace = Workspace(read_workspace_settings(merged, approve="ask"), tmp_path)
        return AgentSession(
            s, cwd=tmp_path, model="openai/test-model", settings=merged, workspace=workspace
        )

    store.append_message({"role": "user", "content": [{"type": "text", "text": "A plan?"}]})
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": REPLY_WITH_HEADINGS}],
            "stopReason": "stop",
        }
    )
    return PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=tmp_path)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_notices_headings_and_the_status_line(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = _notices_app(tmp_path)

    async def refuse(pilot: Pilot[Any]) -> None:
        view = pilot.app.query_one(ChatView)
        await view.wait_idle()
        agent = pilot.app.agent  # type: ignore[attr-defined]
        agent.model_name = None  # the model goes away: the next prompt is refused
        await pilot.press(*"next step", "enter")
        await view.wait_idle()
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=refuse)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_help_screen(
    snap_compare: Any, app_factory: Callable[..., PituiApp], size: tuple[int, int]
) -> None:
    """F1: keys and what they do in two columns (a long description wraps in its own)."""
    assert snap_compare(app_factory(model=None), terminal_size=size, press=["f1"])


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_fork_picker(
    snap_compare: Any, app_factory: Callable[..., PituiApp], size: tuple[int, int]
) -> None:
    """/fork: each prompt with when it was sent, its branch, and the reply that followed."""
    app = app_factory("pi-v3-branches.jsonl", model=None)

    async def open_picker(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        pilot.app.run_slash("/fork")  # type: ignore[attr-defined]
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=open_picker)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_shell_output_collapsed(
    snap_compare: Any, app_factory: Callable[..., PituiApp], size: tuple[int, int]
) -> None:
    """A collapsed bash result shows its last lines under "▲ N earlier lines" (the hidden lines
    are above them), and the toggle under them."""
    app = app_factory(settings=WINDOW_200K)
    _tool_session(app.store)
    assert snap_compare(app, terminal_size=size)
