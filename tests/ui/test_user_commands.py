"""``!command`` and ``!!command`` through the TUI: run in the shell, live output in the chat,
Esc stops it, stored as pi stores them (checked with pi 1.6's own code), the model reads ``!``
output and never ``!!``, key values redacted, the read-only approval mode applies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import fixed_clock
from support.llm_server import ScriptedLLMServer, slow, text
from support.pi_check import pi_context
from support.screens import SIZE, wait_for

from pitui.agent.session import AgentSession
from pitui.agent.workspace import Workspace
from pitui.checkpoint.settings import read_workspace_settings
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import ToolBlock
from pitui.ui.widgets.prompt import PromptEditor


def make_app(
    tmp_path: Path,
    *,
    api_base: str = "http://127.0.0.1:9/v1",
    approve: str | None = None,
    checkpoints: bool = False,
) -> PituiApp:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "a.txt").write_text("hello\n")
    store = SessionStore.create(tmp_path / "sessions", str(project))
    merged = Settings.from_dict(
        {"ui": {"cursorBlink": False}, "checkpoint": {"enabled": checkpoints}}
    )

    def factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s,
            cwd=project,
            model="openai/test-model",
            api_base=api_base,
            settings=merged,
            workspace=Workspace(read_workspace_settings(merged, approve=approve), project),
        )

    return PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=project)


def bash_messages(app: PituiApp) -> list[dict[str, Any]]:
    store = app.store
    out = []
    for node in store.path_to():
        if node.role == "bashExecution":
            out.append(store.data(node)["message"])
    return out


def file_messages(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"] for e in lines if e.get("type") == "message"]


async def test_bang_runs_the_command_and_stores_it_as_pi_does(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(text("Seen."))
    app = make_app(tmp_path, api_base=f"{llm.url}/v1")
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"!cat a.txt; echo done")
        assert editor.has_class("-shell")
        assert "output goes into the conversation" in str(editor.border_subtitle)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        await pilot.press(*"!!exit 3", "enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 2)
        await wait_for(pilot, lambda: len(app.query(ToolBlock)) == 2)
        blocks = list(app.query(ToolBlock))
        assert blocks[0].tool_title == "$ cat a.txt; echo done"
        assert "not sent to the model" in blocks[1].tool_title
        assert blocks[1].is_error
        # pi writes a session file once it has a reply: one more prompt.
        await pilot.press(*"thanks", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        path = app.store.path
    assert path is not None
    ran, excluded = [m for m in file_messages(path) if m["role"] == "bashExecution"]
    assert ran == {
        "role": "bashExecution",
        "command": "cat a.txt; echo done",
        "output": "hello\ndone\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": ran["timestamp"],
        "excludeFromContext": False,
    }
    assert excluded["exitCode"] == 3 and excluded["excludeFromContext"] is True

    # pi 1.6 reads both, and its own transform sends the first to the model, not the second.
    pi = pi_context(path)
    roles = [m["role"] for m in pi["messages"]]
    assert roles.count("user") == 2  # convertToLlm: the ! run as user text, then "thanks"
    sent = json.dumps(pi["messages"])
    assert "Ran `cat a.txt; echo done`" in sent
    assert "exit 3" not in sent
    # What pitui sent the model for the ! run is pi's text for it, word for word.
    theirs = next(m for m in pi["messages"] if m["role"] == "user")["content"][0]["text"]
    assert theirs == "Ran `cat a.txt; echo done`\n```\nhello\ndone\n\n```"
    ours = [m["content"] for m in llm.requests[0].messages if m["role"] == "user"]
    assert theirs in ours
    assert "exit 3" not in json.dumps(llm.requests[0].messages)


async def test_output_is_live_and_esc_stops_the_command(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"!echo first; sleep 30; echo never", "enter")
        await wait_for(pilot, lambda: len(app.query(ToolBlock)) == 1)
        block = app.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.live_lines >= 1)
        assert block.running
        assert app.agent is not None and app.agent.user_commands.running
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        message = bash_messages(app)[0]
        assert message["cancelled"] is True
        assert "exitCode" not in message
        assert message["output"] == "first\n"
        await wait_for(pilot, lambda: not app.query_one(ToolBlock).running)
        assert "(command cancelled)" in app.query_one(ToolBlock)._output[-1].plain


async def test_one_command_at_a_time(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"!sleep 30", "enter")
        assert app.agent is not None
        await wait_for(pilot, lambda: app.agent is not None and app.agent.user_commands.running)
        await pilot.press(*"!ls", "enter")
        await pilot.pause()
        assert editor.text == "!ls"  # kept, with the reason in the transcript
        from pitui.ui.widgets.chat import ChatView

        chat = app.query_one(ChatView)
        await wait_for(pilot, lambda: any("already running" in n.text for n in chat.notices))
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)


async def test_key_values_are_redacted_and_escapes_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        command = "!echo sk-ant-test-0123456789abcdef; printf '\\033[31mred\\033]0;title\\007\\n'"
        await pilot.press(*command, "enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        output = bash_messages(app)[0]["output"]
    assert "sk-ant-test" not in output
    assert "[redacted ANTHROPIC_API_KEY]" in output
    assert "red" in output and "\x1b" not in output and "title" not in output


async def test_read_only_mode_runs_only_reading_commands(tmp_path: Path) -> None:
    app = make_app(tmp_path, approve="read-only")
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"!rm a.txt", "enter")
        await pilot.pause()
        assert editor.text == "!rm a.txt"
        from pitui.ui.widgets.chat import ChatView

        chat = app.query_one(ChatView)
        await wait_for(pilot, lambda: any("read-only" in n.text for n in chat.notices))
        assert (tmp_path / "project" / "a.txt").exists()
        editor.text = ""
        await pilot.press(*"!ls", "enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        assert "a.txt" in bash_messages(app)[0]["output"]


async def test_the_model_reads_bang_output_and_never_double_bang(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(text("Noted."))
    app = make_app(tmp_path, api_base=f"{llm.url}/v1")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"!echo visible-output", "enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        await pilot.press(*"!!echo hidden-output", "enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 2)
        await pilot.press(*"what did you see?", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
    sent = json.dumps(llm.requests[0].messages)
    assert "Ran `echo visible-output`" in sent and "visible-output\\n" in sent
    assert "hidden-output" not in sent


async def test_a_command_during_a_run_is_stored_after_it(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(slow(" ".join(["word"] * 100), 0.2))
    app = make_app(tmp_path, api_base=f"{llm.url}/v1")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"tell me a story", "enter")
        agent = app.agent
        assert agent is not None
        await wait_for(pilot, lambda: agent.running and len(llm.requests) == 1)
        await pilot.press(*"!echo meanwhile", "enter")
        # It runs at once; its message waits for the run's end.
        await wait_for(pilot, lambda: any(not b.running for b in app.query(ToolBlock)))
        assert agent.running
        assert bash_messages(app) == []
        await pilot.press("escape")  # the command is done: Esc aborts the run
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        roles = [n.role for n in app.store.path_to() if n.type == "message"]
        assert roles[-2:] == ["assistant", "bashExecution"]
        assert bash_messages(app)[0]["output"] == "meanwhile\n"
        await wait_for(pilot, lambda: len(app.query(ToolBlock)) == 1)


async def test_a_command_that_changes_files_is_checkpointed(tmp_path: Path) -> None:
    app = make_app(tmp_path, checkpoints=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"!echo more > b.txt", "enter")
        await wait_for(pilot, lambda: len(bash_messages(app)) == 1)
        await wait_for(
            pilot,
            lambda: (
                app.store.leaf is not None
                and app.store.leaf.type == "custom"
                and (app.store.data(app.store.leaf).get("data") or {}).get("reason") == "after-run"
            ),
            timeout=60,
        )
        data = app.store.data(app.store.leaf)["data"]  # type: ignore[arg-type]
        assert {"path": "b.txt", "status": "A"} in data["changes"]
