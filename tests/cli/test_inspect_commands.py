"""`pitui context`, `pitui tree` and `pitui sessions`: output shapes, exit codes, stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.fixtures import FIXTURES_DIR as FIXTURES
from support.fixtures import expected_files

from pitui.cli import main
from pitui.cli.session_args import find_by_prefix
from pitui.session import SessionStore

EXPECTED = expected_files("*.project.json")

PROJECTION_KEYS = (
    "leafId",
    "model",
    "thinkingLevel",
    "messages",
    "sourceEntryIds",
    "pathIds",
    "systemPromptText",
    "currentToolNames",
)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _fixture_and_leaf(expected: Path) -> tuple[Path, str]:
    fixture, leaf = expected.name.split(".")[:2]
    return FIXTURES / f"{fixture}.jsonl", leaf


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda p: p.name)
def test_context_json_matches_pi(capsys: pytest.CaptureFixture[str], expected: Path) -> None:
    fixture, leaf = _fixture_and_leaf(expected)
    argv = ["context", str(fixture), "--json"] + ([] if leaf == "default" else ["--leaf", leaf])
    code, out, err = run_main(capsys, *argv)
    assert code == 0, err
    got = json.loads(out)
    want = json.loads(expected.read_text())
    for key in PROJECTION_KEYS:
        assert got[key] == want[key], key


@pytest.mark.parametrize(
    "expected", [p for p in EXPECTED if ".default." in p.name], ids=lambda p: p.name
)
def test_tree_json_matches_pi(capsys: pytest.CaptureFixture[str], expected: Path) -> None:
    fixture, _ = _fixture_and_leaf(expected)
    code, out, _ = run_main(capsys, "tree", str(fixture), "--json")
    assert code == 0
    got = json.loads(out)
    want = json.loads(expected.read_text())
    assert got["leafId"] == want["leafId"]
    assert got["children"] == want["children"]
    assert got["labels"] == want["labels"]
    assert got["sessionName"] == want["sessionName"]


def test_context_accepts_a_unique_id_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(
        capsys, "context", str(FIXTURES / "pi-v3-branches.jsonl"), "--leaf", "c34f1", "--json"
    )
    assert code == 0
    assert json.loads(out)["leafId"] == "c34f19b4"


def test_context_text_lists_messages_with_token_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "context", str(FIXTURES / "pi-v3-context-edit.jsonl"))
    assert code == 0
    lines = out.splitlines()
    assert any("compactionSummary" in line for line in lines)
    # Edited entries are marked, and the total is printed.
    assert any(line.strip().startswith("4  1af5e7a8*") for line in lines)
    assert "12 messages" in out and "tokens (chars/4 estimate)" in out


def test_tree_text_marks_active_path_and_leaf(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(capsys, "tree", str(FIXTURES / "pi-v3-branches.jsonl"))
    assert code == 0
    leaf_line = next(line for line in out.splitlines() if line.startswith("a2d5fcdf"))
    assert "• assistant: Answering tie sibling 2." in leaf_line and "← leaf" in leaf_line
    off_path = next(line for line in out.splitlines() if line.startswith("169c03ea"))
    assert "•" not in off_path and "└─ " in off_path


def test_bad_inputs_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_session = tmp_path / "notes.jsonl"
    not_session.write_text('{"type":"message","id":"a"}\n')
    cases = [
        ["context", str(tmp_path / "missing.jsonl")],
        ["context", str(not_session)],
        ["tree", str(tmp_path)],
        ["context", str(FIXTURES / "pi-v3-branches.jsonl"), "--leaf", "nope"],
    ]
    for argv in cases:
        code, out, err = run_main(capsys, *argv)
        assert code == 2, argv
        assert out == ""
        assert len(err.strip().splitlines()) == 1 and err.startswith("pitui: "), err
    assert not_session.read_text() == '{"type":"message","id":"a"}\n'  # never written


def test_ambiguous_prefix_lists_candidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z"}]
    parent = None
    for entry_id in ("ab000001", "ab000002"):
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "x", "timestamp": 1},
            }
        )
        parent = entry_id
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, _, err = run_main(capsys, "context", str(path), "--leaf", "ab")
    assert code == 2
    assert "ambiguous" in err and "ab000001" in err and "ab000002" in err


def test_warnings_go_to_stderr_without_changing_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    source = (FIXTURES / "pi-v3-branches.jsonl").read_text().splitlines(keepends=True)
    path.write_text("".join(source[:3]) + "this is not json\n" + "".join(source[3:]))
    code, out, err = run_main(capsys, "context", str(path), "--json")
    assert code == 0
    assert "line 4: not valid JSON" in err
    assert json.loads(out)["leafId"] == "a2d5fcdf"


def test_leaf_marker_never_shows_in_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore.create(tmp_path, str(tmp_path))
    first = store.append_message({"role": "user", "content": "one", "timestamp": 1})
    store.append_message({"role": "user", "content": "two", "timestamp": 2})
    store.branch(first)
    path = store.path
    store.close()
    assert path is not None and "pitui.leaf" in path.read_text()
    code, out, _ = run_main(capsys, "context", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["leafId"] == first and data["pathIds"] == [first]
    code, out, _ = run_main(capsys, "tree", str(path), "--json")
    assert "pitui.leaf" not in out
    tree = json.loads(out)
    assert sum(len(v) for v in tree["children"].values()) == 2


def test_sessions_lists_this_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sessions"
    here, elsewhere = tmp_path / "proj", tmp_path / "other"
    here.mkdir()
    elsewhere.mkdir()
    for cwd, text in ((here, "first here"), (elsewhere, "other project")):
        store = SessionStore.create(folder, str(cwd))
        store.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "timestamp": 1_700_000_000_000,
            }
        )
        store.append_session_info(f"name {text}")
        store.close()
    monkeypatch.chdir(here)
    monkeypatch.setenv("PITUI_SESSION_DIR", str(folder))
    code, out, _ = run_main(capsys, "sessions", "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["firstMessage"] for r in rows] == ["first here"]
    row = rows[0]
    for key in (
        "path",
        "id",
        "name",
        "created",
        "modified",
        "messageCount",
        "cwd",
        "parentSession",
    ):
        assert key in row
    assert row["name"] == "name first here" and row["messageCount"] == 1
    code, out, _ = run_main(capsys, "sessions", "--all", "--json")
    assert len(out.splitlines()) == 2
    # A folder named with --session-dir is listed whole (tests/cli/test_session_ids.py).
    code, out, _ = run_main(capsys, "--session-dir", str(folder), "sessions", "--json")
    assert len(out.splitlines()) == 2


def test_sessions_prints_ids_unique_among_those_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ids sharing their first 8 characters are printed as long as needed (like git), and
    the printed id opens the session with --session."""
    folder = tmp_path / "sessions"
    monkeypatch.chdir(tmp_path)
    ids = ["0123abcd-1111-4000-8000-000000000001", "0123abcd-2222-4000-8000-000000000002"]
    for index, session_id in enumerate(ids):
        store = SessionStore.create(folder, str(tmp_path), session_id=session_id)
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"s{index}"}], "timestamp": 1}
        )
        store.close()
    code, out, _ = run_main(capsys, "--session-dir", str(folder), "sessions")
    assert code == 0
    shown = sorted(line.split()[2] for line in out.splitlines() if not line.startswith(" "))
    assert shown == ["0123abcd-1", "0123abcd-2"]
    for session_id, prefix in zip(ids, shown, strict=True):
        found = find_by_prefix(prefix, folder, str(tmp_path))
        assert found.name.endswith(f"_{session_id}.jsonl")


@pytest.mark.slow
def test_cli_process_never_prints_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    result = subprocess.run(
        [sys.executable, "-m", "pitui", "context", str(tmp_path / "nothing.jsonl")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip() == f"pitui: Session file {tmp_path / 'nothing.jsonl'} does not exist."
    )


def test_internal_error_is_one_line_and_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pitui.cli import inspect_cmds

    def boom(_args: object) -> int:
        raise RuntimeError("unexpected state")

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(inspect_cmds, "cmd_tree", boom)
    code, out, err = run_main(capsys, "tree", str(FIXTURES / "pi-v3-branches.jsonl"))
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "internal error (RuntimeError: unexpected state)" in err
    log = tmp_path / "state" / "pitui" / "pitui.log"
    assert "Traceback" in log.read_text() and "unexpected state" in log.read_text()
