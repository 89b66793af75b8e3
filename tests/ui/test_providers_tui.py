"""The TUI drives the agent through a thinking tool loop against every local provider server:
the chat shows the thinking, the tools and the answer, and the session is stored as pi stores it.
Claude's replies show their cache hits in the status line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.providers.loops import ANSWER, LOOPS
from support.screens import SIZE, run_finished
from textual.pilot import Pilot

from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import AssistantBlock, ChatView, ThinkingBlock, ToolBlock
from pitui.ui.widgets.status import StatusLine


async def settle(pilot: Pilot[Any], app: PituiApp) -> None:
    await pilot.pause(0.1)  # the run starts
    await run_finished(pilot, app, timeout=30.0)


@pytest.mark.parametrize("case", sorted(LOOPS))
async def test_thinking_tool_loop_in_the_tui(
    case: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    app_factory: Callable[..., PituiApp],
) -> None:
    loop = LOOPS[case]
    server = request.getfixturevalue(loop.fixture)
    (tmp_path / "notes.txt").write_text("alpha\n")
    loop.script(server)
    app = app_factory(model=loop.model, api_base=loop.api_base(server), thinking="high")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"what do my notes say?", "enter")
        await settle(pilot, app)
        view = app.query_one(ChatView)
        assert [b.source for b in view.query(AssistantBlock)][-1] == ANSWER
        assert len(view.query(ThinkingBlock)) >= 3
        assert {t.tool_name for t in view.query(ToolBlock)} == {"bash", "read"}
        assert not any(t.is_error for t in view.query(ToolBlock))
        status = app.query_one(StatusLine).render_text()
        if case == "claude":
            assert "cache 9" in status  # the last reply read most of its prompt from the cache
        assert "error" not in status.lower()
    assert len(server.requests) == 3
    stored = [m for m in app.store.project().messages if m.get("role") == "assistant"]
    assert [(m["api"], m["provider"], m["model"]) for m in stored] == [loop.names] * 3
    assert all(m["stopReason"] in ("toolUse", "stop") for m in stored)


async def test_a_reply_at_the_output_limit_says_so(
    tmp_path: Path, app_factory: Callable[..., PituiApp], claude: Any
) -> None:
    from support.providers import anthropic as api

    from pitui.ui.widgets.chat import NoteBlock

    claude.script(api.reply(api.Text("A long answer that stops"), stop_reason="max_tokens"))
    app = app_factory(model="anthropic/claude-sonnet-4-5", api_base=claude.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"write a lot", "enter")
        await settle(pilot, app)
        notes = [str(n.visual) for n in app.query_one(ChatView).query(NoteBlock)]
        assert notes == ["The reply hit the output limit (64,000 tokens)."]
        assert [b.source for b in app.query_one(ChatView).query(AssistantBlock)] == [
            "A long answer that stops"
        ]
