"""Demo mode: the generated example session and the offline demo model (through the real agent
path: litellm, streaming, tools, compaction), in the app and without it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import fixed_clock
from support.screens import wait_for

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.llm.demo_model import (
    DEMO_MODEL,
    DemoModelServer,
    chat_reply,
    summary_reply,
)
from pitui.session import SessionStore
from pitui.session.loader import load_session_file
from pitui.ui import demo
from pitui.ui.app import PituiApp
from pitui.ui.demo import build_demo_session, demo_app_settings, make_demo_app, write_demo_project
from pitui.ui.widgets.status import StatusLine


@pytest.fixture(scope="module")
def demo_server() -> Iterator[DemoModelServer]:
    server = DemoModelServer(chunk_delay=0).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def demo_files(tmp_path: Path) -> tuple[Path, Path]:
    """(project folder, session file)."""
    project = write_demo_project(tmp_path / "wordfreq")
    return project, build_demo_session(tmp_path / "sessions", project, now=fixed_clock)


def entries(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


# ------------------------------------------------------------------------------ the session


def test_demo_session_is_a_valid_v3_file(demo_files: tuple[Path, Path]) -> None:
    project, path = demo_files
    load = load_session_file(path)
    assert load.header is not None
    assert load.header["version"] == 3
    assert load.header["cwd"] == str(project)
    assert load.warnings == []
    types = [e["type"] for e in entries(path)]
    for kind in (
        "model_change",
        "thinking_level_change",
        "message",
        "session_info",
        "label",
        "compaction",
        "context_edit",
    ):
        assert kind in types, kind
    assert "custom" not in types  # no leaf marker: the last entry is the leaf


def test_demo_session_has_branches_compaction_and_context_edit(
    demo_files: tuple[Path, Path],
) -> None:
    project, path = demo_files
    with SessionStore.open(path) as store:
        assert store.session_name == demo.SESSION_NAME
        assert list(store.labels.values()) == [demo.LABEL]
        # Three leaves: the original first prompt, the abandoned JSON idea, the active branch.
        branch_points = [parent for parent, kids in store.tree().items() if len(kids) > 1]
        assert len(branch_points) == 2
        leaves = [n for n in store.nodes() if not store.children(n.id)]
        assert len(leaves) == 3
        first_prompts = [
            text for _, text in store.user_messages() if text.startswith(("Why do", "The tests"))
        ]
        assert first_prompts == [
            "Why do the tests fail? Just explain, don't change anything yet.",
            "The tests fail. Find out why and fix it.",
        ]

        path_nodes = store.path_to()
        kinds = [n.type for n in path_nodes]
        compaction = store.data(path_nodes[kinds.index("compaction")])
        assert compaction["systemMessage"]["role"] == "system"
        assert set(compaction["systemMessage"]["sections"]) >= {"preamble", "tools", "cwd"}
        assert compaction["details"] == {"readFiles": [], "modifiedFiles": ["wordfreq.py"]}
        assert compaction["summary"].startswith("## Goal\n")
        assert "<modified-files>\nwordfreq.py\n</modified-files>" in compaction["summary"]
        assert compaction["tokensBefore"] > 1000

        edit = store.data(path_nodes[kinds.index("context_edit")])
        failed = store.data(store.node(edit["targetId"]))["message"]
        assert edit["replacement"] is None
        assert failed["stopReason"] == "error"

        projection = store.project()
        roles = [m["role"] for m in projection.messages]
        assert roles[:2] == ["system", "compactionSummary"]
        assert roles.count("toolResult") == 3
        system = projection.system_message
        assert system is not None
        assert [t["name"] for t in system["toolsAdded"]] == ["read", "bash", "edit", "write"]
        assert "project_context" in system["sections"]
        # The failed reply is omitted from what the model sees.
        assert all(m.get("stopReason") != "error" for m in projection.messages)
        assert projection.model == {"provider": "openai", "modelId": "pitui-demo"}
        tool_names = {
            b["name"]
            for n in store.nodes()
            if n.type == "message" and n.role == "assistant"
            for b in store.data(n)["message"]["content"]
            if b["type"] == "toolCall"
        }
        assert tool_names == {"read", "edit", "bash"}
        assert store.project().leaf_id == path_nodes[-1].id
        assert (project / "wordfreq.py").read_text() == demo.WORDFREQ_V3


def test_demo_message_ages_come_from_the_clock(demo_files: tuple[Path, Path]) -> None:
    from pitui.session.listing import read_session_info

    _, path = demo_files
    info = read_session_info(path)
    assert info is not None
    minutes = (fixed_clock() - info.modified_ms / 1000) / 60
    assert 1 < minutes < 10
    assert info.name == demo.SESSION_NAME


# ------------------------------------------------------------------------------ the model


def test_demo_model_replies_are_deterministic() -> None:
    messages = [{"role": "user", "content": "hello [bold] there"}]
    first = chat_reply(messages, ["bash"])
    assert first == chat_reply(messages, ["bash"])
    assert first[0] == "text" and "demo model" in first[1]
    assert chat_reply([{"role": "user", "content": "please list the files"}], ["bash"]) == (
        "tool",
        ("bash", {"command": "ls -1"}),
    )
    result = chat_reply([{"role": "tool", "content": "a\nb"}], ["bash"])
    assert "2 lines" in result[1]


def test_summary_reply_has_the_structured_sections() -> None:
    conversation = (
        '[User]: Fix the parser\n\n[Assistant tool calls]: read(path="parser.py")\n\n'
        "[Tool result]: ok\n\n[Assistant]: Done"
    )
    text = summary_reply(f"<conversation>\n{conversation}\n</conversation>\n\nSummarize")
    for heading in ("## Goal", "## Progress", "### Done", "## Next Steps", "## Critical Context"):
        assert heading in text
    assert "- Fix the parser" in text
    assert "parser.py" in text


@pytest.mark.slow
async def test_demo_model_answers_through_the_agent(
    demo_files: tuple[Path, Path], demo_server: DemoModelServer
) -> None:
    project, path = demo_files
    with SessionStore.open(path) as store:
        agent = AgentSession(
            store,
            cwd=project,
            model=DEMO_MODEL,
            api_base=demo_server.api_base,
            settings=demo_app_settings(),
        )
        assert agent.problem() is None
        assert agent.model_info is not None and agent.model_info.context_window == 32_000
        before = len(store)
        result = await agent.prompt("Hello, demo!")
        assert result.ok, result.error
        reply = store.project().messages[-1]
        assert reply["role"] == "assistant"
        assert "demo model" in reply["content"][0]["text"]
        assert reply["usage"]["input"] > 1000 and reply["usage"]["output"] > 10
        # No new system patch or model change: the session already records both.
        added = [store.data(n) for n in list(store.nodes())[before:]]
        assert [e["type"] for e in added] == ["message", "message"]

        # A tool call runs the real bash tool in the project.
        result = await agent.prompt("list the files")
        assert result.ok
        messages = store.project().messages
        assert messages[-2]["role"] == "toolResult"
        assert "wordfreq.py" in messages[-2]["content"][0]["text"]

        compacted = await agent.compact()
        assert compacted.summary.startswith("## Goal\n")
        assert store.path_to()[-1].type == "compaction"
        assert store.project().messages[1]["role"] == "compactionSummary"


async def test_navigation_with_a_branch_summary_by_the_demo_model(
    demo_files: tuple[Path, Path], demo_server: DemoModelServer
) -> None:
    """Going back to the first prompt (edit and resubmit) and summarizing the branch left."""
    project, path = demo_files
    with SessionStore.open(path) as store:
        agent = AgentSession(
            store,
            cwd=project,
            model=DEMO_MODEL,
            api_base=demo_server.api_base,
            settings=demo_app_settings(),
        )
        first = next(
            entry_id
            for entry_id, text in store.user_messages()
            if text.startswith("The tests fail")
        )
        result = await agent.navigate(first, summarize=True)
        assert result.editor_text == "The tests fail. Find out why and fix it."
        assert result.summary_entry_id is not None
        summary = store.data(store.node(result.summary_entry_id))
        assert summary["type"] == "branch_summary"
        assert "## Goal" in summary["summary"] and "## Next Steps" in summary["summary"]
        reply = await agent.prompt("The tests fail. Find out why, fix it, and add a test.")
        assert reply.ok
        assert "demo model" in store.project().messages[-1]["content"][0]["text"]


# ------------------------------------------------------------------------------ the app


def demo_app(demo_files: tuple[Path, Path], server: DemoModelServer, **kwargs: Any) -> PituiApp:
    project, path = demo_files
    return make_demo_app(
        path,
        server.api_base,
        settings=Settings.from_dict({"ui": {"cursorBlink": False}}),
        cwd=project,
        clock=fixed_clock,
        **kwargs,
    )


async def test_demo_app_prompt_and_compact(
    demo_files: tuple[Path, Path], demo_server: DemoModelServer
) -> None:
    app = demo_app(demo_files, demo_server)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.demo
        status = app.screen.query_one(StatusLine)
        assert "openai/pitui-demo (demo)" in status.render_text()
        assert "/32k" in status.render_text()
        assert demo.SESSION_NAME in status.render_text()
        assert app.session_folder == demo_files[1].parent

        await pilot.press(*"hi there", "enter")
        await wait_for(
            pilot,
            lambda: (
                app.agent is not None
                and not app.agent.running
                and app.store.project().messages[-1]["role"] == "assistant"
            ),
        )
        await pilot.pause()
        reply = app.store.project().messages[-1]
        assert "demo model" in reply["content"][0]["text"]

        await pilot.press(*"/compact", "enter")
        await wait_for(pilot, lambda: app.store.path_to()[-1].type == "compaction")
        await pilot.pause()
        entry = app.store.data(app.store.path_to()[-1])
        assert "## Goal" in entry["summary"]


async def test_demo_app_edit_and_resubmit(
    demo_files: tuple[Path, Path], demo_server: DemoModelServer
) -> None:
    """Branching from an earlier user message (what the tree's edit-and-resubmit does) and
    sending the edited text makes a new sibling answered by the demo model."""
    app = demo_app(demo_files, demo_server)
    async with app.run_test(size=(100, 30)) as pilot:
        store = app.store
        target = next(
            n
            for n in store.path_to()
            if n.type == "message"
            and n.role == "user"
            and "README" in str(store.data(n)["message"]["content"])
        )
        assert target.parent is not None
        siblings = len(store.children(target.parent.id))
        store.branch(target.parent.id)
        await pilot.pause()
        await pilot.press(*"Run it on README.md with --top 5", "enter")
        await wait_for(
            pilot,
            lambda: (
                app.agent is not None
                and not app.agent.running
                and store.project().messages[-1]["role"] == "assistant"
            ),
        )
        await pilot.pause()
        assert len(store.children(target.parent.id)) == siblings + 1
        assert "demo model" in store.project().messages[-1]["content"][0]["text"]
        status = app.screen.query_one(StatusLine).render_text()
        assert "branch 2 of 2" in status


def test_run_demo_starts_and_stops_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_run(self: PituiApp) -> int:
        seen["demo"] = self.demo
        seen["session"] = self.store.path
        seen["agent"] = self.agent
        assert self.agent is not None and self.agent.api_base is not None
        seen["api_base"] = self.agent.api_base
        self.store.close()
        return 0

    monkeypatch.setattr(PituiApp, "run", fake_run)
    started: list[DemoModelServer] = []
    original_start = DemoModelServer.start

    def tracking_start(self: DemoModelServer) -> DemoModelServer:
        started.append(self)
        return original_start(self)

    monkeypatch.setattr(DemoModelServer, "start", tracking_start)
    assert demo.run_demo(Settings()) == 0
    assert seen["demo"] is True
    assert seen["api_base"].startswith("http://127.0.0.1:")
    assert seen["agent"].model_name == DEMO_MODEL
    assert not Path(seen["session"]).exists()  # the temporary folder is gone
    assert len(started) == 1 and not started[0].running
