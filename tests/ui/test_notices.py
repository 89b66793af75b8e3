"""Notices stay in the transcript (not toasts over the prompt): a prompt refused for want of a
model (the text kept, how to set one), another program's appends, a failed /compact."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.llm_server import ScriptedLLMServer, empty
from support.screens import SIZE, command, messages_shown, wait_for

from pitui.config.settings import Settings, user_settings_path
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import ChatView
from pitui.ui.widgets.markdown_view import MarkdownView
from pitui.ui.widgets.notice import NoticeBlock
from pitui.ui.widgets.prompt import PromptEditor


def notices(app: PituiApp) -> list[str]:
    return [n.text for n in app.screen.query_one(ChatView).notices]


def toasts(app: PituiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_no_model_keeps_the_prompt_and_says_how_to_set_one(
    app_factory: Callable[..., PituiApp],
) -> None:
    app = app_factory()  # an agent without a model
    app.agent.model_name = None  # type: ignore[union-attr]
    async with app.run_test(size=SIZE) as pilot:
        editor = app.screen.query_one(PromptEditor)
        await pilot.press(*"fix the bug", "enter")
        await wait_for(pilot, lambda: len(notices(app)) == 1)
        assert editor.text == "fix the bug"  # kept
        (notice,) = notices(app)
        assert notice.startswith("No model is configured: the prompt was not sent")
        assert "--model provider/name" in notice and str(user_settings_path()) in notice
        assert "pitui --demo" in notice
        assert toasts(app) == []  # no refusal toast, no newline hint over the editor
        block = app.screen.query_one(NoticeBlock)
        assert block.has_class("-warning")


def _line(entry_id: str, parent: str | None, text: str, role: str = "user") -> bytes:
    entry: dict[str, Any] = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }
    if role == "assistant":
        entry["message"]["stopReason"] = "stop"
    return json.dumps(entry).encode() + b"\n"


def _session(path: Path) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "0190a6f2-0000-7000-8000-0000000000ab",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(path.parent),
    }
    path.write_bytes(
        json.dumps(header).encode()
        + b"\n"
        + _line("u1", None, "first prompt")
        + _line("a1", "u1", "first answer", "assistant")
    )


def _chat_text(app: PituiApp) -> str:
    chat = app.screen.query_one(ChatView)
    return " ".join(
        w.text if isinstance(w, MarkdownView) else str(w.render()) for w in chat.query("*")
    )


async def _wait_for_entry(pilot: Any, app: PituiApp, entry_id: str) -> None:
    deadline = time.monotonic() + 10
    while entry_id not in app.store:
        assert time.monotonic() < deadline, f"{entry_id} never arrived"
        await pilot.pause(0.1)


async def test_appends_that_continue_the_branch_are_shown_and_said(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    app = PituiApp(
        SessionStore.open(path),
        settings=Settings.from_dict({"ui": {"cursorBlink": False}}),
        cwd=tmp_path,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        appended = _line("u2", "a1", "a prompt pi sent") + _line(
            "a2", "u2", "pi's answer to it", "assistant"
        )
        with open(path, "ab") as f:
            f.write(appended)
        size = path.stat().st_size
        await _wait_for_entry(pilot, app, "a2")
        await wait_for(pilot, lambda: "pi's answer to it" in _chat_text(app))
        assert app.store.leaf_id == "a2"  # the next prompt continues after pi's entries
        await wait_for(pilot, lambda: len(notices(app)) == 1)
        assert notices(app) == [
            "Another program appended 2 entries to this session; they continue this branch."
        ]
        assert "a prompt pi sent" in _chat_text(app)
    assert path.stat().st_size >= size  # pitui wrote nothing of its own for the move


async def test_appends_on_another_branch_leave_the_leaf_and_say_so(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _session(path)
    app = PituiApp(
        SessionStore.open(path),
        settings=Settings.from_dict({"ui": {"cursorBlink": False}}),
        cwd=tmp_path,
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        with open(path, "ab") as f:
            f.write(_line("u9", "u1", "a sibling branch written by pi", "assistant"))
        await _wait_for_entry(pilot, app, "u9")
        await wait_for(pilot, lambda: len(notices(app)) == 1)
        assert app.store.leaf_id == "a1"
        (notice,) = notices(app)
        assert notice.startswith("Another program appended 1 entry to this session on another")
        assert "your next prompt continues this branch" in notice
        assert "a sibling branch" not in _chat_text(app)


async def test_a_failed_compaction_leaves_a_trace_in_the_transcript(
    app_factory: Callable[..., PituiApp], llm: ScriptedLLMServer
) -> None:
    app = app_factory(llm_url=llm.url, settings={"compaction": {"keepRecentTokens": 50}})
    for i in range(4):
        app.store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"question {i} " * 60}]}
        )
        answer = {"type": "text", "text": f"Answer {i}. " + "word " * 400}
        app.store.append_message({"role": "assistant", "content": [answer], "stopReason": "stop"})
    async with app.run_test(size=SIZE) as pilot:
        llm.script(empty())  # the summary request returns no text
        await command(pilot, "/compact")
        await wait_for(pilot, lambda: any("not compacted" in n for n in notices(app)))
        (notice,) = [n for n in notices(app) if "not compacted" in n]
        assert "no text" in notice and "the session is unchanged" in notice
        assert not any(n.type == "compaction" for n in app.store.path_to())
        assert not any("not compacted" in t for t in toasts(app))
        assert messages_shown(app)[: len(notices(app))] == notices(app)
