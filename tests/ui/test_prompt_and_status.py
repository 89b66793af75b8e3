"""Pilot tests for the prompt editor (submit, newline, history, completion) and the status line
(model, gauge, branch position, spinner, retry countdown, no-model sentence), plus /copy."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import ScriptedLLMServer, error, slow, text
from support.screens import SIZE, run_finished, wait_for
from textual.app import App

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import UserBlock
from pitui.ui.widgets.prompt import PromptEditor
from pitui.ui.widgets.status import NO_MODEL, SPINNER, StatusLine, short_tokens

WINDOW_200K = {"models": {"openai/test-model": {"contextWindow": 200_000}}}


def status(app: PituiApp) -> str:
    return app.query_one(StatusLine).render_text()


# ---------------------------------------------------------------------------------- editor


async def test_enter_submits_and_ctrl_j_adds_a_newline(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"line one", "ctrl+j", *"line two")
        assert editor.text == "line one\nline two"
        await pilot.press("shift+enter", *"three")
        assert editor.text == "line one\nline two\nthree"
        await pilot.press("enter")
        await pilot.pause()
        assert editor.prompt_history[-1] == "line one\nline two\nthree"
        # No model: the prompt is not sent, and not lost (it is back in the editor).
        assert editor.text == "line one\nline two\nthree"


async def test_submit_posts_the_prompt_and_ignores_blank_text(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        seen: list[str] = []
        original = editor.post_message

        def record(message: Any) -> bool:
            if isinstance(message, PromptEditor.Submitted):
                seen.append(message.text)
                return True
            return original(message)

        editor.post_message = record  # type: ignore[method-assign]
        await pilot.press("space", "space", "enter")
        assert seen == []
        await pilot.press(*"  hello  ", "enter")
        assert seen == ["hello"]


async def test_up_recalls_earlier_prompts_and_down_walks_back(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        editor.prompt_history = ["first", "second\nwith two lines", "third"]
        await pilot.press("up")
        assert editor.text == "third"
        await pilot.press("up")
        assert editor.text == "second\nwith two lines"
        # Recalled with Up, the cursor is at its start: Up again goes on.
        assert editor.cursor_location == (0, 0)
        await pilot.press("up")
        assert editor.text == "first"
        await pilot.press("up")  # the oldest stays
        assert editor.text == "first"
        await pilot.press("down")
        assert editor.text == "second\nwith two lines"
        # Recalled with Down, the cursor is at its end (the last line): Down walks on.
        assert editor.cursor_location == (1, len("with two lines"))
        await pilot.press("down")
        assert editor.text == "third"
        await pilot.press("down")
        assert editor.text == ""


async def test_history_starts_with_the_sessions_prompts(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        assert editor.prompt_history[0] == "Let's design the tree widget."
        await pilot.press("up")
        assert editor.text == editor.prompt_history[-1]


async def test_tab_completes_slash_commands_and_lists_matches(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press("slash", "c")
        assert editor.completions() == ["/clone", "/compact", "/context", "/copy"]
        assert editor.menu == ["/clone", "/compact", "/context", "/copy"]
        await pilot.press("o", "m", "tab")
        assert editor.text == "/compact "
        await pilot.pause()
        assert editor.menu == []  # a space ends the command name
        assert editor.border_subtitle is None
        editor.text = ""
        await pilot.press("slash", *"he", "tab")
        assert editor.text == "/help "


async def test_tab_moves_focus_when_not_completing(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"hello", "tab")
        assert editor.text == "hello"
        assert not editor.has_focus


# ---------------------------------------------------------------------------------- status


async def test_status_shows_model_thinking_gauge_and_branch_position(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        line = status(app)
        assert app.agent is not None
        used = short_tokens(app.agent.compactor.context_tokens())
        assert line.startswith("openai/test-model  ·  thinking ")
        assert f"{used}/200k" in line
        # The leaf answers "tie sibling 2", the second of two children with equal timestamps.
        assert "branch 2 of 2" in line
        # An answer written later but timestamped earlier than its sibling comes first.
        app.store.branch("2eb29f80")
        await wait_for(pilot, lambda: "branch 1 of 2" in status(app))


@pytest.mark.parametrize("mode", ["ask", "read-only", "auto"])
@pytest.mark.slow
async def test_status_shows_the_approval_mode_and_the_working_directory(
    tmp_path: Path, mode: str
) -> None:
    from conftest import fixed_clock

    from pitui.agent.session import AgentSession
    from pitui.agent.workspace import Workspace
    from pitui.checkpoint.settings import read_workspace_settings
    from pitui.config.settings import Settings

    merged = Settings.from_dict({"ui": {"cursorBlink": False}})
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))

    def factory(s: SessionStore) -> AgentSession:
        workspace = Workspace(read_workspace_settings(merged, approve=mode), tmp_path)
        return AgentSession(
            s, cwd=tmp_path, model="openai/test-model", settings=merged, workspace=workspace
        )

    app = PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        line = status(app)
        parts = line.split("  ·  ")
        assert parts[-1] == str(tmp_path)  # where the tools run, last
        if mode == "auto":
            assert "approve:" not in line  # pi's way: nothing to say
        else:
            assert f"approve: {mode}" in parts


async def test_a_narrow_status_line_drops_parts_then_ends_with_an_ellipsis(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-labels-and-names.jsonl", settings=WINDOW_200K)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(StatusLine)
        full = widget.render_text()
        shown = str(widget.render())
        assert len(full) > 78 and "thinking" in full
        assert len(shown) <= 78 and shown.startswith("openai/test-model")
        assert "thinking" not in shown  # dropped before anything is cut
        widget.mark_busy()  # the spinner takes room on the right
        await pilot.pause()
        busy = str(widget.render())
        assert len(busy) <= 78 and "working" in busy
        left = busy.split("   ")[0]
        assert left.endswith("…") or len(left) < len(shown)


async def test_gauge_is_unknown_right_after_a_compaction(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-compaction-and-system-prompt.jsonl", settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "?/200k" not in status(app)
        app.store.branch("97c1ae73")  # the second compaction entry itself
        await wait_for(pilot, lambda: "?/200k" in status(app))
        app.store.branch("efd4a6bd")  # a user message after it: still no reply
        await pilot.pause()
        assert "?/200k" in status(app)
        app.store.branch("71ba0f9c")  # the reply after it: known again
        await wait_for(pilot, lambda: "?/200k" not in status(app))
        assert "k/200k" in status(app)


async def test_status_without_a_model_says_how_to_configure_one(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory(model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert status(app).startswith(NO_MODEL)
        assert "--model provider/name" in NO_MODEL
        assert NO_MODEL.count(".") == 1  # one sentence


async def test_status_shows_session_name(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory("pi-v3-labels-and-names.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.store.session_name
        assert app.store.session_name in status(app)


async def test_spinner_and_elapsed_time_while_the_agent_works(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    # A reply that streams for ~3 s, so a loaded machine still shows a tick before it ends.
    llm.script(slow("one two three four five six seven eight nine ten", 0.3))
    app = app_factory(llm_url=llm.url, settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: "working" in status(app))
        line = status(app)
        assert line.endswith("working 0s")  # the test clock is fixed
        assert line.split("  ·  ")[-1][0] in SPINNER
        first = app.query_one(StatusLine)._frame
        await wait_for(pilot, lambda: app.query_one(StatusLine)._frame != first, timeout=3)
        await run_finished(pilot, app)
        await wait_for(pilot, lambda: "working" not in status(app))
        assert not any(ch in status(app) for ch in SPINNER)


async def test_status_keeps_following_the_session_after_a_run(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    """Regression: the line's agent flag shadowed Textual's ``_running``, so once a run ended
    the next store event unsubscribed it: the position froze and the next run spun forever."""
    llm.script(text("first answer"), text("second answer"))
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url, settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await run_finished(pilot, app)
        await wait_for(pilot, lambda: "working" not in status(app))
        app.store.branch("2eb29f80")  # while idle: the first of two siblings
        await wait_for(pilot, lambda: "branch 1 of 2" in status(app))
        await pilot.press(*"again", "enter")
        await run_finished(pilot, app)
        await wait_for(pilot, lambda: "working" not in status(app))
        assert not any(ch in status(app) for ch in SPINNER)


async def test_retry_countdown_after_a_rate_limit(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    # 3 s: the countdown shows only until the retry; a loaded machine delivered the event to
    # the status line late enough to miss a 1 s window.
    llm.script(
        error(429, "Rate limit reached", headers={"Retry-After": "3"}),
        text("recovered"),
    )
    app = app_factory(llm_url=llm.url, settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: "retrying" in status(app))
        assert re.fullmatch(r"retrying in [123]s \(1/3\)", status(app).split("  ·  ")[-1][2:])
        await run_finished(pilot, app)
        assert "retrying" not in status(app)
        assert len(llm.requests) == 2


# ---------------------------------------------------------------------------------- /copy


async def test_copy_falls_back_to_osc52_when_pyperclip_fails(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_copy(text: str) -> None:
        raise RuntimeError("no clipboard mechanism")

    fake = types.ModuleType("pyperclip")
    fake.copy = broken_copy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyperclip", fake)
    copied: list[str] = []
    monkeypatch.setattr(App, "copy_to_clipboard", lambda self, text: copied.append(text))
    app = app_factory("pi-v3-branches.jsonl", model=None)
    notes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press(*"/copy", "enter")
        await wait_for(pilot, lambda: bool(notes))
    assert copied == ["Answering tie sibling 2."]
    assert notes == [
        "Copied through the terminal (OSC 52); your terminal must allow clipboard access."
    ]


async def test_copy_uses_pyperclip_when_it_works(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    clipboard: list[str] = []
    fake = types.ModuleType("pyperclip")
    fake.copy = clipboard.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pyperclip", fake)
    osc: list[str] = []
    monkeypatch.setattr(App, "copy_to_clipboard", lambda self, text: osc.append(text))
    app = app_factory("pi-v3-branches.jsonl", model=None)
    notes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press(*"/copy", "enter")
        await wait_for(pilot, lambda: bool(notes))
    assert clipboard == ["Answering tie sibling 2."]
    assert osc == []
    assert notes == ["Copied to the clipboard."]


async def test_submitted_prompt_is_shown_once(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    llm.script(text("hi back"))
    app = app_factory(llm_url=llm.url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello there", "enter")
        await run_finished(pilot, app)
        users = list(app.query(UserBlock))
        assert [str(u.visual) for u in users] == ["hello there"]


async def test_spinner_ticks_do_not_recompute_the_gauge(
    app_factory: Callable[..., PituiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_factory("pi-v3-compaction-and-system-prompt.jsonl", settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.agent is not None
        calls: list[int] = []
        original = app.agent.compactor.context_tokens

        def counted() -> int:
            calls.append(1)
            return original()

        monkeypatch.setattr(app.agent.compactor, "context_tokens", counted)
        line = app.query_one(StatusLine)
        line.mark_busy()
        for _ in range(30):
            line._tick()
            line.render()
        assert calls == []
        app.store.append_session_info("renamed")  # a store event: recomputed once
        await pilot.pause()
        await pilot.pause()
        assert len(calls) == 1
        assert "renamed" in status(app)


async def test_status_follows_store_events_while_idle_after_a_run(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    """Issue 11: after a reply, the status line kept listening (it used to overwrite Textual's
    own ``_running`` flag, the signal dropped it, and it went stale for good)."""
    llm.script(text("the answer"))
    app = app_factory("pi-v3-branches.jsonl", llm_url=llm.url, settings=WINDOW_200K)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"a question", "enter")
        await run_finished(pilot, app)
        await wait_for(pilot, lambda: "working" not in status(app))
        assert app.query_one(StatusLine).is_running  # Textual's flag is untouched
        # Idle now: store events still reach the status line.
        app.store.append_session_info("renamed after the run")
        await wait_for(pilot, lambda: "renamed after the run" in status(app))
        app.store.branch("2eb29f80")  # a tree move
        await wait_for(pilot, lambda: "branch 1 of 2" in status(app))
        app.store.append_session_info("and again")
        await wait_for(pilot, lambda: "and again" in status(app))


async def test_branch_position_follows_appends_at_the_leaf(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory("pi-v3-branches.jsonl", model=None)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "branch 2 of 2" in status(app))
        store = app.store
        leaf = store.leaf_id
        # An append at the leaf (no children): same fork, same position.
        store.append_message({"role": "user", "content": [{"type": "text", "text": "more"}]})
        await pilot.pause()
        assert "branch 2 of 2" in status(app)
        # Back to the fork (two children), and a new entry there: a third branch, the newest.
        assert leaf is not None
        fork = store.node(leaf).parent
        while fork is not None and len(store.tree_children(fork.id)) < 2:
            fork = fork.parent
        assert fork is not None
        store.branch(fork.id)
        await pilot.pause()
        store.append_message({"role": "assistant", "content": [], "stopReason": "stop"})
        await wait_for(pilot, lambda: "branch 3 of 3" in status(app))
        assert store.branch_position().text() == "branch 3 of 3"
