"""Restoring: nothing unsaved is lost, outside edits are guarded, and a crash or kill -9 at any
point leaves the folder in the old or the new state (after the next pitui opens the store)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.folders import OpenStore, picture, tree_bytes, write

from pitui.checkpoint import restore as restore_module
from pitui.checkpoint.restore import RestoreFailed, RestoreRefused, preview, restore
from pitui.checkpoint.settings import CheckpointSettings
from pitui.checkpoint.store import CheckpointStore


def test_restore_and_redo(project: Path, open_store: OpenStore) -> None:
    write(project, {"keep.txt": "k", "edit.py": "v1\n", "gone.md": "g", "dir/a": "a"})
    store = open_store()
    old = store.capture("s").commit
    before = picture(project)
    # The "agent" refactors: edits, deletes, creates (untracked files and folders included).
    write(project, {"edit.py": "v2\n", "new/deep/file.py": "n", "dir/b": "b"})
    (project / "gone.md").unlink()
    after = picture(project)
    result = restore(store, old, namespace="s")
    assert picture(project) == before
    assert sorted(result.written) == ["edit.py", "gone.md"]
    assert sorted(result.deleted) == ["dir/b", "new/deep/file.py"]
    assert not (project / "new").exists()  # folders emptied by the restore go too
    # The files created after the checkpoint were saved first: going forward brings them back.
    result2 = restore(store, result.plan.pre.commit, namespace="s")
    assert picture(project) == after
    assert "new/deep/file.py" in result2.written


def test_types_swap_both_ways(project: Path, open_store: OpenStore) -> None:
    write(project, {"x": "file", "y/inner": "i", "t.txt": "t"})
    os.chmod(project / "t.txt", 0o600)
    os.symlink("t.txt", project / "z")
    store = open_store()
    first = store.capture("s").commit
    state1 = picture(project)
    (project / "x").unlink()
    write(project, {"x/now-a-dir": "d"})
    (project / "y" / "inner").unlink()
    (project / "y").rmdir()
    os.symlink("t.txt", project / "y")
    (project / "z").unlink()
    write(project, {"z": "now a file"})
    os.chmod(project / "t.txt", 0o640)  # a change of permissions only
    state2 = picture(project)
    restore(store, first, namespace="s")
    assert picture(project) == state1
    restore(store, store.capture("s").commit, namespace="s")  # no-op
    assert picture(project) == state1
    second = [c for _, c, _ in store.refs()]
    assert second
    # and back to state 2 through the pre-restore checkpoint
    pre = [c for c in second if store.modes(c).get("t.txt") == 0o640]
    restore(store, pre[0], namespace="s")
    assert picture(project) == state2


def test_outside_edits_are_refused_kept_or_overwritten(
    project: Path, open_store: OpenStore
) -> None:
    write(project, {"a.txt": "a1", "b.txt": "b1"})
    store = open_store()
    target = store.capture("s").commit
    write(project, {"a.txt": "a2 by the agent", "b.txt": "b2 by the agent"})
    baseline = store.capture("s").commit  # the last checkpoint (after the agent's run)
    write(project, {"b.txt": "b3 typed by the user"})  # outside pitui
    with pytest.raises(RestoreRefused) as refused:
        restore(store, target, namespace="s", baseline=baseline)
    assert refused.value.paths == ["b.txt"]
    assert (project / "a.txt").read_text() == "a2 by the agent"  # nothing changed
    result = restore(store, target, namespace="s", baseline=baseline, outside="keep")
    assert (project / "a.txt").read_text() == "a1"
    assert (project / "b.txt").read_text() == "b3 typed by the user"
    assert [(k.path, k.reason) for k in result.kept] == [("b.txt", "changed outside pitui (kept)")]
    restore(store, target, namespace="s", baseline=baseline, outside="overwrite")
    assert (project / "b.txt").read_text() == "b1"
    # The user's text is in the pre-restore checkpoint.
    assert store.read_blobs([store.files(result.plan.pre.commit)["b.txt"][1]]).popitem()[1] == (
        b"b3 typed by the user"
    )


def test_unsaved_files_are_never_overwritten_or_deleted(
    project: Path, open_store: OpenStore
) -> None:
    write(project, {"report.txt": "old small report", "notes/a.md": "a"})
    store = open_store(max_file_size=100)
    target = store.capture("s").commit
    # Now report.txt is too large to save, and an ignored folder sits where a file was.
    write(project, {"report.txt": "R" * 500, ".gitignore": "notes/\n", "notes/b.md": "b"})
    plan = preview(store, target)
    kept = {k.path: k.reason for k in plan.not_restorable}
    assert "report.txt" in kept
    result = restore(store, target, namespace="s")
    assert (project / "report.txt").read_text() == "R" * 500
    assert (project / "notes" / "b.md").read_text() == "b"
    assert not (project / ".gitignore").exists()
    assert {k.path for k in result.kept} >= {"report.txt"}


def test_what_the_target_never_saved_is_neither_deleted_nor_overwritten(
    project: Path, open_store: OpenStore
) -> None:
    """The issue's case: files over the size limit at the target were not saved; the agent
    shrank them to 1 byte, added an ignored file's rule away, and a nested repository and a
    submodule sit in the folder. Restoring leaves every one of them as it is and lists it as
    not restorable; what the target did save comes back."""
    git = ["git", "-c", "user.name=u", "-c", "user.email=u@x"]
    write(project, {"app.py": "v1\n", ".gitignore": "*.log\n", "debug.log": "log at target\n"})
    (project / "big.bin").write_bytes(b"B" * 3000)
    (project / "mid.csv").write_bytes(b"M" * 2500)
    write(project, {"vendor/lib/x.c": "nested at target\n"})
    subprocess.run(["git", "init", "-q", str(project / "vendor" / "lib")], check=True)
    sub_source = project.parent / "sub-source"
    write(sub_source, {"s.txt": "submodule\n"})
    subprocess.run(["git", "init", "-q", str(sub_source)], check=True)
    subprocess.run([*git, "-C", str(sub_source), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(sub_source), "commit", "-qm", "s"], check=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(
        [
            *git,
            "-C",
            str(project),
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            str(sub_source),
            "modules/sub",
        ],
        check=True,
    )
    store = open_store(max_file_size=2048)
    target = store.capture("s")
    assert {s.path for s in target.skipped} == {"big.bin", "mid.csv", "vendor/lib", "modules/sub"}
    # The run: shrinks the big files (now small enough to be saved), drops the ignore rule,
    # edits app.py, and turns the nested repository into a plain folder.
    (project / "big.bin").write_bytes(b"b")
    (project / "mid.csv").write_bytes(b"m")
    write(project, {".gitignore": "", "app.py": "v2\n", "debug.log": "log now\n"})
    shutil.rmtree(project / "vendor" / "lib" / ".git")
    write(project, {"vendor/lib/x.c": "plain folder now\n", "modules/sub/s.txt": "edited\n"})
    plan = preview(store, target.commit)
    not_restorable = {k.path: k.reason for k in plan.not_restorable}
    assert not_restorable == {
        "big.bin": "not saved at that point: larger than 2 KB",
        "mid.csv": "not saved at that point: larger than 2 KB",
        "debug.log": "ignored at that point, so not saved there",
        "vendor/lib/x.c": "not saved at that point: a nested git repository",
        "modules/sub": "not saved at that point: a nested git repository",
    }
    assert {(c.path, c.status) for c in plan.changes} == {("app.py", "M"), (".gitignore", "M")}
    result = restore(store, target.commit, namespace="s")
    assert (project / "app.py").read_text() == "v1\n"
    assert (project / ".gitignore").read_text() == "*.log\n"
    assert (project / "big.bin").read_bytes() == b"b"
    assert (project / "mid.csv").read_bytes() == b"m"
    assert (project / "debug.log").read_text() == "log now\n"
    assert (project / "vendor" / "lib" / "x.c").read_text() == "plain folder now\n"
    assert (project / "modules" / "sub" / "s.txt").read_text() == "edited\n"
    assert result.deleted == []
    # Redo (forward again) brings back the small versions the pre-restore checkpoint saved.
    restore(store, result.plan.pre.commit, namespace="s")
    assert (project / ".gitignore").read_text() == "" and (project / "app.py").read_text() == "v2\n"


def test_checkpoints_made_before_their_commits_listed_what_they_left_out(
    project: Path, open_store: OpenStore
) -> None:
    """A checkpoint from an older pitui lists its left-out files only in its session entry:
    the restore takes them from there."""
    write(project, {"a.txt": "a"})
    (project / "big.bin").write_bytes(b"B" * 3000)
    store = open_store(max_file_size=2048)
    target = store.capture("s")
    tree = store.tree_of(target.commit)
    old_style = store.git.run(["commit-tree", tree, "-m", "pitui checkpoint"]).decode().strip()
    store.keep("s", [old_style])
    (project / "big.bin").write_bytes(b"b")
    assert [c.path for c in preview(store, old_style).changes] == ["big.bin"]  # would delete
    plan = preview(store, old_style, target_skipped={"big.bin": "larger than 2 KB"})
    assert plan.changes == []
    assert [k.path for k in plan.not_restorable] == ["big.bin"]


def test_a_preview_that_went_stale_refuses(project: Path, open_store: OpenStore) -> None:
    write(project, {"a.txt": "1"})
    store = open_store()
    target = store.capture("s").commit
    write(project, {"a.txt": "2"})
    plan = preview(store, target)
    write(project, {"a.txt": "3"})
    with pytest.raises(RestoreRefused, match="changed since the preview"):
        restore(store, target, namespace="s", expected=plan.pre)
    assert (project / "a.txt").read_text() == "3"


def test_the_users_repository_is_untouched_byte_for_byte(
    project: Path, open_store: OpenStore
) -> None:
    git = ["git", "-c", "user.name=u", "-c", "user.email=u@x", "-C", str(project)]
    write(project, {"tracked.py": "v1\n", "staged.py": "s1\n", ".gitignore": "*.log\n"})
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    write(project, {"tracked.py": "v2 stashed\n"})
    subprocess.run([*git, "stash", "-q"], check=True)
    write(project, {"staged.py": "s2 staged\n", "tracked.py": "v3 uncommitted\n"})
    subprocess.run([*git, "add", "staged.py"], check=True)
    write(project, {"untracked.txt": "u", "debug.log": "ignored"})
    status_before = subprocess.run([*git, "status", "--porcelain"], capture_output=True).stdout
    dot_git = tree_bytes(project / ".git")
    store = open_store()
    first = store.capture("s").commit
    write(project, {"tracked.py": "agent\n", "new.py": "n"})
    (project / "untracked.txt").unlink()
    store.capture("s")
    restore(store, first, namespace="s")
    store.prune(current="s", needed=set())
    assert tree_bytes(project / ".git") == dot_git
    # (git status itself may refresh the index, so it runs only after the byte comparison.)
    status_after = subprocess.run([*git, "status", "--porcelain"], capture_output=True).stdout
    assert status_after == status_before
    stash = subprocess.run([*git, "stash", "list"], capture_output=True, text=True).stdout
    assert stash.count("\n") == 1
    assert (project / "tracked.py").read_text() == "v3 uncommitted\n"


def test_a_crash_while_staging_leaves_the_old_state(
    project: Path, open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {f"f{i}.txt": f"old {i}" for i in range(20)})
    store = open_store()
    target = store.capture("s").commit
    write(project, {f"f{i}.txt": f"new {i}" for i in range(20)})
    state = picture(project)
    real_stage = restore_module._stage

    def crash(*args: object) -> object:
        real_stage(*args)  # type: ignore[arg-type]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(restore_module, "_stage", crash)
    with pytest.raises(RestoreFailed) as failed:
        restore(store, target, namespace="s")
    assert str(failed.value) == (
        "The files were not restored: the disk is full; nothing was changed (free some space "
        "and try again)."
    )
    assert picture(project) == state
    assert not list((store.folder / "staging").iterdir())


@pytest.mark.parametrize("crash_after", [0, 1, 7, 19, 35])
def test_a_crash_while_applying_is_finished_by_the_next_open(
    project: Path, open_store: OpenStore, monkeypatch: pytest.MonkeyPatch, crash_after: int
) -> None:
    write(project, {f"d{i % 3}/f{i}.txt": f"old {i}" for i in range(30)})
    store = open_store()
    target = store.capture("s").commit
    expected = picture(project)
    for i in range(0, 30, 2):
        (project / f"d{i % 3}" / f"f{i}.txt").unlink()
    write(project, {f"e/n{i}.txt": "new" for i in range(10)})
    write(project, {f"d{i % 3}/f{i}.txt": f"changed {i}" for i in range(1, 30, 2)})
    real_replay = restore_module._replay

    def crash(store_: CheckpointStore, ops: list[dict[str, str]]) -> None:
        real_replay(store_, ops[:crash_after])
        raise KeyboardInterrupt  # the process dies here

    monkeypatch.setattr(restore_module, "_replay", crash)
    with pytest.raises(KeyboardInterrupt):
        restore(store, target, namespace="s")
    monkeypatch.setattr(restore_module, "_replay", real_replay)
    reopened = CheckpointStore.open(project, CheckpointSettings(), store.folder.parent)
    assert picture(project) == expected
    assert not (reopened.folder / "journal.json").exists()
    assert any(ns == "recovery" for ns, _, _ in reopened.refs())


KILL_SCRIPT = """
import sys, pathlib
from pitui.checkpoint.store import CheckpointStore
from pitui.checkpoint.settings import CheckpointSettings
from pitui.checkpoint.restore import restore
root, folder, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
store = CheckpointStore.open(folder, CheckpointSettings(), root)
print("ready", flush=True)
sys.stdin.readline()
restore(store, target, namespace="s")
print("done", flush=True)
"""


def test_kill_9_at_random_points_leaves_one_of_the_two_states(
    project: Path, state_root: Path
) -> None:
    rng = random.Random(13)
    write(project, {f"p{i % 7}/f{i}.txt": f"state A {i}\n" * 20 for i in range(200)})
    store = CheckpointStore.open(project, CheckpointSettings(), state_root)
    state_a = store.capture("s").commit
    picture_a = picture(project)
    for i in range(0, 200, 3):
        (project / f"p{i % 7}" / f"f{i}.txt").unlink()
    write(project, {f"q{i % 5}/g{i}.txt": f"state B {i}\n" for i in range(120)})
    write(project, {f"p{i % 7}/f{i}.txt": f"state B {i}\n" for i in range(1, 200, 3)})
    state_b = store.capture("s").commit
    picture_b = picture(project)
    # How long one restore takes here, to spread the kills over it.
    started = time.perf_counter()
    restore(store, state_a, namespace="s")
    duration = time.perf_counter() - started
    current = "A"
    outcomes = {"A": 0, "B": 0}
    phases = {"before": 0, "applying": 0, "done": 0}
    for round_ in range(10):
        target = state_b if current == "A" else state_a
        proc = subprocess.Popen(
            [sys.executable, "-c", KILL_SCRIPT, str(state_root), str(project), target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        if round_ % 2:
            # Anywhere in the whole restore (capture, staging, applying, cleaning up).
            time.sleep(rng.uniform(0, duration * 1.2))
        else:
            # Inside the short apply phase: once the journal exists, a few milliseconds in
            # (the phase lasts ~10-15 ms here: up to 20 ms in missed it half the time).
            journal = store.folder / "journal.json"
            deadline = time.monotonic() + 10
            while not journal.exists() and time.monotonic() < deadline:
                time.sleep(0.0002)
            time.sleep(rng.uniform(0, 0.004))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if (store.folder / "journal.json").exists():
            phases["applying"] += 1
        elif picture(project) == (picture_b if current == "A" else picture_a):
            phases["done"] += 1
        else:
            phases["before"] += 1
        # The next pitui that opens the store finishes (or never started) the restore.
        CheckpointStore.open(project, CheckpointSettings(), state_root)
        now = picture(project)
        assert now in (picture_a, picture_b), "a mix of the two states"
        current = "A" if now == picture_a else "B"
        outcomes[current] += 1
    assert outcomes["A"] + outcomes["B"] == 10
    assert phases["applying"] >= 3, phases  # the hard case was really exercised


SWING_SCRIPT = """
import sys, pathlib, time
from pitui.checkpoint.store import CheckpointStore
from pitui.checkpoint.settings import CheckpointSettings
from pitui.checkpoint.restore import restore
root, folder = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
targets = sys.argv[3:]
store = CheckpointStore.open(folder, CheckpointSettings(), root)
for i in range(8):
    restore(store, targets[i % 2], namespace="swing")
    time.sleep(0.1)  # let the other process in between restores too
print("ok", flush=True)
"""


def test_a_restore_in_one_process_and_captures_in_another_never_see_a_mix(
    project: Path, state_root: Path
) -> None:
    """Two pitui processes on one project: one swings the folder between two states while the
    other keeps capturing it. Every capture is one of the two states, never a mix, and the
    store is sound afterwards."""
    write(project, {f"d{i % 4}/f{i}.txt": f"A {i}\n" for i in range(60)})
    store = CheckpointStore.open(project, CheckpointSettings(), state_root)
    state_a = store.capture("s")
    for i in range(0, 60, 2):
        (project / f"d{i % 4}" / f"f{i}.txt").unlink()
    write(project, {f"e{i % 3}/g{i}.txt": f"B {i}\n" for i in range(40)})
    state_b = store.capture("s")
    trees = {state_a.tree: "A", state_b.tree: "B"}
    swing = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SWING_SCRIPT,
            str(state_root),
            str(project),
            state_a.commit,
            state_b.commit,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    while swing.poll() is None:
        capture = store.capture("watcher")
        seen.append(trees.get(capture.tree, "mix"))
        time.sleep(0.02)  # a pitui captures now and then, not back to back (see the lock)
    out, err = swing.communicate(timeout=120)
    assert swing.returncode == 0 and out.strip() == "ok", err[-2000:]
    assert "mix" not in seen
    assert {"A", "B"} <= set(seen)  # it did look at the folder between the restores
    assert trees[store.capture("watcher").tree] == "B"  # the last restore went to B
    fsck = store.git.run(["fsck", "--strict", "--no-dangling"], check=False)
    assert b"error" not in fsck.lower()
