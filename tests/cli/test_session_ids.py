"""Every command that takes a session takes the id prefix `pitui sessions` prints, as
`--session` does; an ambiguous or unknown prefix is one sentence and exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.test_checkpoint_cmds import make_session

from pitui.cli import main
from pitui.config import resolve_session_folder
from pitui.session import SessionStore


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def new_session(folder: Path, cwd: Path, text: str, session_id: str | None = None) -> Path:
    store = SessionStore.create(folder, str(cwd), session_id=session_id)
    store.append_message(
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}
    )
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": f"re: {text}"}],
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    assert store.path is not None
    path = store.path
    store.close()
    return path


def printed_prefix(capsys: pytest.CaptureFixture[str], *before: str) -> str:
    code, out, err = run(capsys, *before, "sessions")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if not line.startswith(" ")]
    return line.split()[2]


def test_every_session_command_takes_the_printed_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, project, ids = make_session(tmp_path)
    monkeypatch.chdir(project)
    folder = str(path.parent)
    prefix = printed_prefix(capsys, "--session-dir", folder)
    assert path.name.split("_", 1)[1].startswith(prefix) and len(prefix) < 36
    same = [
        ["context", "{}", "--json"],
        ["tree", "{}", "--json"],
        ["stats", "{}", "--json"],
        ["checkpoints", "{}", "--json"],
        ["export", "{}", "--format", "md", "-o", "-"],
        ["export", "{}", "--format", "jsonl", "-o", "-"],
        ["compact", "{}", "--dry-run", "--json"],
        ["restore", "{}", "--leaf", ids["u1"], "--dry-run"],
    ]
    for argv in same:
        by_path = run(capsys, "--session-dir", folder, *[a.format(path) for a in argv])
        by_id = run(capsys, "--session-dir", folder, *[a.format(prefix) for a in argv])
        assert by_path[0] == 0, (argv, by_path[2])
        assert by_id == by_path, argv
    # A real restore by id moves that session's files and leaf.
    code, out, err = run(capsys, "--session-dir", folder, "restore", prefix, "--leaf", ids["u1"])
    assert code == 0, err
    assert (project / "util.py").exists() and not (project / "helpers.py").exists()
    assert f"`pitui restore {path} --leaf " in out


def test_the_default_session_folder_is_searched_without_a_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    folder, _ = resolve_session_folder(str(project))
    path = new_session(folder, project, "hello")
    monkeypatch.chdir(project)
    prefix = printed_prefix(capsys)
    code, out, err = run(capsys, "tree", prefix)
    assert code == 0, err
    assert "user: hello" in out
    # From another directory the prefix is found among every session pitui keeps.
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "export", prefix, "--format", "jsonl", "-o", "-")
    assert code == 0 and out == path.read_text()


def test_an_ambiguous_or_unknown_prefix_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sessions"
    monkeypatch.chdir(tmp_path)
    first = "0123abcd-1111-4000-8000-000000000001"
    second = "0123abcd-2222-4000-8000-000000000002"
    for session_id in (first, second):
        new_session(folder, tmp_path, session_id[-1], session_id)
    for command in ("context", "tree", "stats", "export", "checkpoints"):
        code, out, err = run(capsys, "--session-dir", str(folder), command, "0123abcd")
        assert (code, out) == (2, ""), command
        assert len(err.strip().splitlines()) == 1, err
        assert "ambiguous" in err and first in err and second in err
        code, out, err = run(capsys, "--session-dir", str(folder), command, "fedcba98")
        assert (code, out) == (2, ""), command
        assert err.startswith("pitui: No session file 'fedcba98' and no session id starts with")
        assert "pitui sessions --all" in err and len(err.strip().splitlines()) == 1
    # One character more is unique.
    code, out, _ = run(capsys, "--session-dir", str(folder), "context", "0123abcd-2", "--json")
    assert code == 0 and json.loads(out)["messages"][0]["content"][0]["text"] == "2"


def test_a_named_session_folder_is_listed_whole_from_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "shared-sessions"
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir()
        new_session(folder, tmp_path / name, f"work on {name}")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, _ = run(capsys, "--session-dir", str(folder), "sessions", "--json")
    assert code == 0
    assert sorted(json.loads(line)["firstMessage"] for line in out.splitlines()) == [
        "work on alpha",
        "work on beta",
    ]
    code, out, _ = run(capsys, "--session-dir", str(folder), "sessions")
    ids = [line.split()[2] for line in out.splitlines() if not line.startswith(" ")]
    assert len(ids) == 2
    for prefix in ids:
        code, out, err = run(capsys, "--session-dir", str(folder), "stats", prefix)
        assert code == 0, err
    # The same folder given by the environment lists this directory's sessions only.
    monkeypatch.setenv("PITUI_SESSION_DIR", str(folder))
    monkeypatch.chdir(tmp_path / "alpha")
    code, out, _ = run(capsys, "sessions", "--json")
    assert [json.loads(line)["firstMessage"] for line in out.splitlines()] == ["work on alpha"]
    code, out, _ = run(capsys, "sessions")
    assert code == 0 and "work on alpha" in out and "work on beta" not in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = run(capsys, "--session-dir", str(empty), "sessions")
    assert (code, out) == (0, f"No sessions in {empty}.\n")
