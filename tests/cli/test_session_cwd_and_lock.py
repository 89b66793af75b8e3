"""The CLI on sessions it cannot simply continue: a stored working directory that is gone
(``-p`` refuses unless ``--cwd`` or ``--fork`` says where to work; tools never re-create it),
and a session another pitui holds (``-p`` refuses naming ``--fork``; the TUI opens it
read-only)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest
from support.fixtures import copy_fixture
from support.llm_server import ScriptedLLMServer, text, tool_call
from support.print_mode import isolated_env, model_args, run_pitui

from pitui.cli import build_parser
from pitui.cli.errors import CliError
from pitui.cli.session_args import open_session, run_cwd, work_dir
from pitui.config.settings import Settings
from pitui.session import SessionStore


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def foreign_session(tmp_path: Path) -> tuple[Path, str]:
    """A session from another machine: its stored working directory does not exist here."""
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path / "elsewhere")
    stored = json.loads(path.read_text().splitlines()[0])["cwd"]
    assert not os.path.exists(stored)
    return path, stored


def test_print_mode_refuses_a_session_whose_directory_is_gone(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    path, stored = foreign_session(tmp_path)
    before = path.read_bytes()
    result = run_pitui(
        ["-p", "hi", "--session", str(path), *model_args(llm, tmp_path / "s")], project, env
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"working directory {stored} no longer exists" in lines[0]
    assert "--cwd ." in lines[0] and f"--fork {path}" in lines[0]
    assert llm.requests == []  # nothing was sent
    assert path.read_bytes() == before
    assert not os.path.exists(stored)


def test_cwd_dot_works_here(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    path, stored = foreign_session(tmp_path)
    llm.script(
        tool_call("write", {"path": "a.txt", "content": "here\n"}),
        tool_call("write", {"path": "sub/b.txt", "content": "there\n"}),
        tool_call("bash", {"command": "pwd"}),
        text("done"),
    )
    args = ["-p", "hi", "--session", str(path), "--cwd", ".", *model_args(llm, tmp_path / "s")]
    result = run_pitui(args, project, env)
    assert result.returncode == 0, result.stderr
    assert (project / "a.txt").read_text() == "here\n"
    assert (project / "sub" / "b.txt").read_text() == "there\n"
    assert not os.path.exists(stored)
    results = [
        json.loads(line)["message"]
        for line in path.read_text().splitlines()
        if '"toolResult"' in line
    ][-3:]
    assert [r["toolName"] for r in results] == ["write", "write", "bash"]
    assert not any(r["isError"] for r in results)
    assert str(project) in results[2]["content"][0]["text"]
    header = json.loads(path.read_text().splitlines()[0])
    assert header["cwd"] == stored  # the session keeps its own directory


def test_fork_continues_a_copy_here(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    path, _stored = foreign_session(tmp_path)
    before = path.read_bytes()
    sessions = tmp_path / "s"
    llm.script(tool_call("write", {"path": "a.txt", "content": "x"}), text("done"))
    result = run_pitui(["-p", "hi", "--fork", str(path), *model_args(llm, sessions)], project, env)
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == before
    (new,) = sessions.glob("*.jsonl")
    header = json.loads(new.read_text().splitlines()[0])
    assert header["cwd"] == str(project) and header["parentSession"] == str(path)
    assert new.read_bytes().split(b"\n", 1)[1].startswith(before.split(b"\n", 1)[1])
    assert (project / "a.txt").read_text() == "x"


def test_print_mode_refuses_a_held_session_naming_fork(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    sessions = tmp_path / "s"
    holder = SessionStore.create(sessions, str(project))
    holder.append_message({"role": "user", "content": "x", "timestamp": 1})
    assert holder.path is not None
    try:
        base = ["-p", "hi", *model_args(llm, sessions)]
        result = run_pitui([*base, "--session", str(holder.path)], project, env)
        assert result.returncode == 2
        line = result.stderr.strip()
        assert "\n" not in line
        assert f"open in another pitui (pid {os.getpid()})" in line
        assert f"--fork {holder.path}" in line
        result = run_pitui([*base, "-c"], project, env)  # the latest session of this directory
        assert result.returncode == 2 and "--fork" in result.stderr
        # --fork reads it without the lock: a copy this run may write.
        llm.script(text("ok"))
        result = run_pitui([*base, "--fork", str(holder.path)], project, env)
        assert result.returncode == 0, result.stderr
        assert len(list(sessions.glob("*.jsonl"))) == 2
    finally:
        holder.close()


# ---------------------------------------------------------------- the TUI's side of the CLI


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_the_tui_opens_a_held_session_read_only(tmp_path: Path, project: Path) -> None:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    holder = SessionStore.open(path)
    try:
        args = parse("--session", str(path))
        store = open_session(args, str(project), Settings(), allow_read_only=True)
        assert store.read_only and store.held_elsewhere
        store.close()
        with pytest.raises(CliError, match="--fork"):
            open_session(args, str(project), Settings())
    finally:
        holder.close()


def test_the_tui_asks_unless_told_where_to_work(tmp_path: Path, project: Path) -> None:
    path, _stored = foreign_session(tmp_path)
    args = parse("--session", str(path))
    with SessionStore.open(path, read_only=True) as store:
        assert work_dir(args, store, str(project), ask=True) is None  # the app asks
        with pytest.raises(CliError, match="no longer exists"):
            work_dir(args, store, str(project))
        told = parse("--session", str(path), "--cwd", str(project))
        assert work_dir(told, store, run_cwd(told)) == str(project)
    with pytest.raises(CliError, match="no such directory"):
        run_cwd(parse("--cwd", str(tmp_path / "nope")))


def test_compact_on_a_held_session_says_to_quit_the_other_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pitui.cli import main

    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    before = path.read_bytes()
    holder = SessionStore.open(path)
    try:
        assert main(["compact", str(path)]) == 2
    finally:
        holder.close()
    err = capsys.readouterr().err.strip()
    assert err == (
        f"pitui: This session is open in another pitui (pid {os.getpid()}): quit it there "
        "first, then run this again."
    )
    assert path.read_bytes().startswith(before)
