"""The user's ``!command`` below the UI: parsing, a long output, a command that cannot start."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pitui.agent.session import AgentSession
from pitui.agent.user_command import UserCommandRefused, parse_user_command
from pitui.session import SessionStore
from pitui.session.shapes import bash_execution_text


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("!ls -la", ("ls -la", False)),
        ("!! git status ", ("git status", True)),
        ("!", None),
        ("!!", None),
        ("!  ", None),
        ("hello !ls", None),
        ("/help", None),
    ],
)
def test_parse(text: str, parsed: tuple[str, bool] | None) -> None:
    assert parse_user_command(text) == parsed


def agent_in(tmp_path: Path) -> AgentSession:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    return AgentSession(store, cwd=tmp_path, model="openai/test-model")


async def test_a_long_output_keeps_its_ends_and_names_the_full_output(tmp_path: Path) -> None:
    agent = agent_in(tmp_path)
    message = await agent.user_commands.run("seq 1 5000")
    assert message["truncated"] is True
    assert message["exitCode"] == 0
    full = Path(message["fullOutputPath"])
    assert full.read_text().splitlines()[-1] == "5000"
    assert oct(os.stat(full).st_mode & 0o777) == "0o600"
    assert message["output"].startswith("1\n") and message["output"].rstrip().endswith("5000")
    text = bash_execution_text(message)
    assert text.endswith(f"[Output truncated. Full output: {full}]")
    stored = agent.store.data(agent.store.leaf)["message"]  # type: ignore[arg-type]
    assert stored == message


async def test_a_missing_folder_is_said_and_nothing_is_stored(tmp_path: Path) -> None:
    agent = agent_in(tmp_path)
    agent.work_in(tmp_path / "gone")
    with pytest.raises(UserCommandRefused, match="does not exist"):
        await agent.user_commands.run("ls")
    assert agent.store.leaf is None
    assert not agent.user_commands.running
