"""`pitui checkpoints` and `pitui restore`: a session with a real run's checkpoints, restored
back and forward from the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.folders import picture, write

from pitui.agent.workspace import Workspace
from pitui.checkpoint.settings import read_workspace_settings
from pitui.cli import main
from pitui.config.settings import Settings
from pitui.session import SessionStore


def message(role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1, **extra}


def make_session(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A session whose one run refactored the project (checkpoints before and after)."""
    project = tmp_path / "project"
    write(project, {"app.py": "def main():\n    return 1\n", "util.py": "X = 1\n"})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    workspace = Workspace(read_workspace_settings(Settings()), project)
    workspace.attach_store(store)
    ids: dict[str, str] = {}

    async def run() -> None:
        ids["u1"] = store.append_message(message("user", "refactor app.py"))
        call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "…"}}
        ids["a1"] = store.append_message(
            {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}
        )
        await workspace.checkpoint("before-change")
        write(project, {"app.py": "def main():\n    return helper()\n", "helpers.py": "h\n"})
        (project / "util.py").unlink()
        store.append_message(message("toolResult", "ok", toolCallId="c1", toolName="bash"))
        ids["a2"] = store.append_message(message("assistant", "Refactored.", stopReason="stop"))
        ref = await workspace.checkpoint("after-run")
        assert ref is not None
        ids["post"] = ref.entry_id

    asyncio.run(run())
    assert store.path is not None
    path = store.path
    store.close()
    return path, project, ids


def test_checkpoints_lists_each_with_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, ids = make_session(tmp_path)
    assert main(["checkpoints", str(path)]) == 0
    out = capsys.readouterr().out
    assert "before changes" in out and "after run" in out
    assert f"at {ids['a2']} assistant: Refactored." in out
    assert "3 file(s): 1 added, 1 modified, 1 deleted" in out
    for line in ("A helpers.py", "M app.py", "D util.py"):
        assert line in out
    assert "  (the folder's checkpoint store: " in out
    assert " KB of 2 GB (checkpoint.maxStoreMB), in " in out
    assert main(["checkpoints", str(path), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["reason"] for r in rows] == ["before-change", "after-run"]
    assert all(r["available"] and r["onPath"] for r in rows)
    assert rows[1]["previous"] == rows[0]["entryId"]


def test_restore_dry_run_then_back_and_forward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, project, ids = make_session(tmp_path)
    after = picture(project)
    assert main(["restore", str(path), "--leaf", ids["a1"], "--dry-run", "--diff"]) == 0
    out = capsys.readouterr().out
    assert "1 added, 1 modified, 1 deleted:" in out
    assert "  D helpers.py" in out and "  A util.py" in out and "  M app.py  +1 -1" in out
    assert "-    return helper()" in out and "+    return 1" in out
    assert picture(project) == after  # a dry run changes nothing

    assert main(["restore", str(path), "--leaf", ids["a1"]]) == 0
    out = capsys.readouterr().out
    assert (project / "app.py").read_text() == "def main():\n    return 1\n"
    assert not (project / "helpers.py").exists() and (project / "util.py").exists()
    assert f"--leaf {ids['post']}" in out
    with SessionStore.open(path, read_only=True) as store:
        assert store.leaf_id == ids["a1"]
    # Going forward again is one more restore.
    assert main(["restore", str(path), "--leaf", ids["post"]]) == 0
    capsys.readouterr()
    assert picture(project) == after


def test_restore_guards_files_changed_outside_pitui(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, project, ids = make_session(tmp_path)
    write(project, {"app.py": "my own edit\n"})
    assert main(["restore", str(path), "--leaf", ids["a1"]]) == 2
    err = capsys.readouterr().err
    assert "changed outside pitui" in err and "--force" in err
    assert (project / "app.py").read_text() == "my own edit\n"
    assert main(["restore", str(path), "--leaf", ids["a1"], "--keep-outside"]) == 0
    capsys.readouterr()
    assert (project / "app.py").read_text() == "my own edit\n"
    assert (project / "util.py").exists() and not (project / "helpers.py").exists()


def test_restore_refuses_an_entry_without_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session begun without checkpoints (in pi): its first run changed files before pitui
    took the first checkpoint, so nothing recorded the files before that run."""
    project = tmp_path / "project"
    write(project, {"app.py": "v1\n"})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    workspace = Workspace(read_workspace_settings(Settings()), project)
    workspace.attach_store(store)
    first = store.append_message(message("user", "in pi"))
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "…"}}
    store.append_message(
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}
    )
    write(project, {"app.py": "v2\n"})
    store.append_message(message("toolResult", "ok", toolCallId="c1", toolName="bash"))
    store.append_message(message("user", "in pitui"))
    assert asyncio.run(workspace.checkpoint("after-run")) is not None
    path = store.path
    assert path is not None
    store.close()
    assert main(["restore", str(path), "--leaf", first]) == 2
    assert "No checkpoint records the files" in capsys.readouterr().err


def test_the_commands_import_neither_textual_nor_litellm(tmp_path: Path) -> None:
    path, _, ids = make_session(tmp_path)
    code = (
        "import sys\n"
        "from pitui.cli import main\n"
        f"main(['checkpoints', {str(path)!r}])\n"
        f"main(['restore', {str(path)!r}, '--leaf', {ids['a1']!r}, '--dry-run'])\n"
        "bad = [m for m in ('textual', 'litellm') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_dry_run_and_restore_list_what_cannot_be_restored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file over the size limit at the target, shrunk since: listed as not restorable, not
    deleted; the rest is restored."""
    project = tmp_path / "project"
    write(project, {"app.py": "v1\n"})
    (project / "big.bin").write_bytes(b"B" * 5000)
    settings = Settings.from_dict({"checkpoint": {"maxFileSizeMB": 0.001}})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    workspace = Workspace(read_workspace_settings(settings), project)
    workspace.attach_store(store)
    first = store.append_message(message("user", "shrink it"))
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "…"}}
    store.append_message(
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}
    )
    assert asyncio.run(workspace.checkpoint("before-change")) is not None
    (project / "big.bin").write_bytes(b"b")
    write(project, {"app.py": "v2\n"})
    store.append_message(message("toolResult", "ok", toolCallId="c1", toolName="bash"))
    assert asyncio.run(workspace.checkpoint("after-run")) is not None
    path = store.path
    assert path is not None
    store.close()
    assert main(["restore", str(path), "--leaf", first, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "  M app.py" in out and "D big.bin" not in out
    assert "Not restorable, left as they are (1):\n  big.bin: not saved at that point: " in out
    assert "larger than 1 KB" in out
    assert main(["restore", str(path), "--leaf", first]) == 0
    assert (project / "app.py").read_text() == "v1\n"
    assert (project / "big.bin").read_bytes() == b"b"


def test_a_full_disk_during_a_restore_is_one_sentence_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from pitui.checkpoint import restore as restore_module

    path, project, ids = make_session(tmp_path)
    before = picture(project)
    real_stage = restore_module._stage

    def full_disk(*args: Any) -> Any:
        real_stage(*args)  # some files staged, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(restore_module, "_stage", full_disk)
    assert main(["restore", str(path), "--leaf", ids["a1"]]) == 2
    err = capsys.readouterr().err
    assert err == (
        "pitui: The files were not restored: the disk is full; nothing was changed (free some "
        "space and try again).\n"
    )
    assert picture(project) == before
