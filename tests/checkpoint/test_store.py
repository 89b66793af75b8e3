"""Capturing a folder: what is saved, what is left out (and said), pruning, and git's absence."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.folders import OpenStore, write

from pitui.checkpoint.git import find_git
from pitui.checkpoint.ignore import rebase_pattern
from pitui.checkpoint.settings import CheckpointSettings
from pitui.checkpoint.store import (
    CheckpointsOff,
    CheckpointStore,
    open_store_or_reason,
)


def paths(store: CheckpointStore, commit: str) -> set[str]:
    return set(store.files(commit))


def test_capture_saves_untracked_files_and_respects_ignores(
    project: Path, open_store: OpenStore
) -> None:
    write(
        project,
        {
            "a.py": "a",
            "src/b.py": "b",
            ".gitignore": "*.log\nbuild/\n",
            "debug.log": "x",
            "build/out.bin": "x",
            "src/.gitignore": "local.txt\n",
            "src/local.txt": "x",
            "node_modules/pkg/index.js": "x",  # a default exclusion
            "data/big.csv": "x",
            "keep.tmp": "x",
        },
    )
    store = open_store(exclude=("data/", "*.tmp"))
    capture = store.capture("s1")
    assert paths(store, capture.commit) == {".gitignore", "a.py", "src/.gitignore", "src/b.py"}
    assert capture.skipped == ()


def test_a_second_capture_without_changes_reuses_the_checkpoint(
    project: Path, open_store: OpenStore
) -> None:
    write(project, {"a.txt": "a"})
    store = open_store()
    first = store.capture("s1")
    assert store.capture("s1").commit == first.commit
    (project / "a.txt").write_text("b")
    second = store.capture("s1")
    assert second.commit != first.commit
    changes = store.changes(first.commit, second.commit)
    assert [(c.path, c.status) for c in changes] == [("a.txt", "M")]


def test_modes_and_symlinks_are_kept(project: Path, open_store: OpenStore) -> None:
    write(project, {"run.sh": "#!/bin/sh\n", "secret.env": "k=v", "plain.txt": "p"})
    os.chmod(project / "run.sh", 0o755)
    os.chmod(project / "secret.env", 0o600)
    os.symlink("plain.txt", project / "link")
    os.symlink("../outside", project / "dangling")
    store = open_store()
    capture = store.capture("s1")
    files = store.files(capture.commit)
    assert files["run.sh"][0] == 0o100755
    assert files["plain.txt"][0] == 0o100644
    assert files["link"][0] == 0o120000 and files["dangling"][0] == 0o120000
    blobs = store.read_blobs([files["link"][1], files["dangling"][1]])
    assert blobs[files["link"][1]] == b"plain.txt"
    assert blobs[files["dangling"][1]] == b"../outside"
    assert capture.modes == {"secret.env": 0o600}
    assert store.modes(capture.commit) == {"secret.env": 0o600}


def test_large_files_are_skipped_with_a_note_and_leave_the_checkpoint(
    project: Path, open_store: OpenStore
) -> None:
    write(project, {"small.txt": "s", "grows.bin": "tiny"})
    store = open_store(max_file_size=1024)
    first = store.capture("s1")
    assert "grows.bin" in paths(store, first.commit)
    (project / "grows.bin").write_bytes(b"x" * 4096)
    (project / "huge.dat").write_bytes(b"y" * 2048)
    second = store.capture("s1")
    assert paths(store, second.commit) == {"small.txt"}
    skipped = {s.path: s for s in second.skipped}
    assert set(skipped) == {"grows.bin", "huge.dat"}
    assert skipped["grows.bin"].size == 4096
    assert "larger than" in skipped["huge.dat"].reason


def test_binary_files_that_change_at_every_checkpoint_are_skipped(
    project: Path, open_store: OpenStore
) -> None:
    blob = project / "cache.db"
    store = open_store()
    notes = []
    for round_ in range(5):
        blob.write_bytes(b"\0" + bytes([round_]) * (300 * 1024))
        capture = store.capture("s1")
        notes.append([s.reason for s in capture.skipped if s.path == "cache.db"])
        in_checkpoint = "cache.db" in paths(store, capture.commit)
        assert in_checkpoint == (round_ < 3)
    assert notes[0] == [] and "changes at every checkpoint" in notes[3][0]
    # A capture where it did not change keeps it left out (the next run rewrites it)...
    capture = store.capture("s1")
    assert "cache.db" not in paths(store, capture.commit)
    # ... until it has been left alone for an hour: then it is saved again.
    hours_ago = time.time() - 2 * 3600
    os.utime(blob, (hours_ago, hours_ago))
    capture = store.capture("s1")
    assert "cache.db" in paths(store, capture.commit)


def test_the_churn_guard_counts_changes_across_captures_where_nothing_changed(
    project: Path, open_store: OpenStore
) -> None:
    """Each run captures before its first change and after it: the before-change capture
    (the binary unchanged since the last run) must not reset the count."""
    blob = project / "model.bin"
    blob.write_bytes(b"\0" + os.urandom(400 * 1024))
    store = open_store()
    saved = []
    for _ in range(6):
        store.capture("s1")  # before the run's first change
        blob.write_bytes(b"\0" + os.urandom(400 * 1024))  # the run rewrites it
        saved.append("model.bin" in paths(store, store.capture("s1").commit))
    assert saved == [True, True, False, False, False, False]


def test_files_the_rules_start_to_ignore_leave_the_checkpoints(
    project: Path, open_store: OpenStore
) -> None:
    write(project, {"a.txt": "a", "gen.out": "g"})
    store = open_store()
    assert "gen.out" in paths(store, store.capture("s1").commit)
    write(project, {".gitignore": "*.out\n"})
    assert paths(store, store.capture("s1").commit) == {"a.txt", ".gitignore"}


def test_nested_repositories_are_noted_not_saved(project: Path, open_store: OpenStore) -> None:
    write(project, {"a.txt": "a", "vendor/lib/x.c": "x"})
    subprocess.run(["git", "init", "-q", str(project / "vendor" / "lib")], check=True)
    capture = open_store().capture("s1")
    assert [(s.path, s.reason) for s in capture.skipped] == [
        ("vendor/lib", "a nested git repository (not saved)")
    ]


def test_a_folder_inside_a_repository_follows_the_rules_from_above(
    tmp_path: Path, state_root: Path
) -> None:
    repo = tmp_path / "repo"
    write(
        repo,
        {
            ".gitignore": "*.o\n/sub/generated/\n/top-only.txt\nsub/**/cache\n",
            "sub/main.c": "m",
            "sub/main.o": "o",
            "sub/generated/g.c": "g",
            "sub/top-only.txt": "t",
            "sub/deep/cache/x": "c",
        },
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.secret\n")
    write(repo, {"sub/k.secret": "s"})
    store = CheckpointStore.open(repo / "sub", CheckpointSettings(), state_root)
    assert paths(store, store.capture("s1").commit) == {"main.c", "top-only.txt"}


def test_rebase_pattern() -> None:
    assert rebase_pattern("*.o", ("sub",)) == "*.o"
    assert rebase_pattern("/sub/gen/", ("sub",)) == "/gen/"
    assert rebase_pattern("sub/gen", ("sub",)) == "/gen"
    assert rebase_pattern("/other/gen", ("sub",)) is None
    assert rebase_pattern("/sub", ("sub",)) is None  # names the folder itself
    assert rebase_pattern("!/s*/keep.txt", ("sub",)) == "!/keep.txt"
    assert rebase_pattern("**/cache", ("sub",)) == "**/cache"
    assert rebase_pattern("a/**/b", ("a", "x")) == "**/b"


def test_a_project_without_git_works(project: Path, open_store: OpenStore) -> None:
    write(project, {"notes.md": "n"})
    assert not (project / ".git").exists()
    store = open_store()
    assert paths(store, store.capture("s1").commit) == {"notes.md"}
    assert not (project / ".git").exists()


def test_without_git_checkpoints_are_off_with_one_sentence(
    project: Path, state_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    store, reason = open_store_or_reason(project, CheckpointSettings(), state_root)
    assert store is None
    assert reason == "git is not installed, so file checkpoints are off (install git)."
    assert find_git(str(empty))[0] is None


def test_home_and_huge_folders_are_refused(
    project: Path, state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(project))
    with pytest.raises(CheckpointsOff, match="home folder"):
        CheckpointStore.open(project, CheckpointSettings(), state_root)
    monkeypatch.undo()
    for i in range(30):
        (project / f"f{i}").write_text("x")
    store = CheckpointStore.open(project, CheckpointSettings(max_files=20), state_root)
    with pytest.raises(CheckpointsOff, match="more than 20 files"):
        store.capture("s1")


def test_pruning_follows_the_policy_and_keeps_what_the_current_tree_needs(
    project: Path, open_store: OpenStore
) -> None:
    store = open_store(keep_days=1)
    commits = {}
    for name in ("old-other", "old-current", "needed", "fresh-other"):
        write(project, {"f.txt": name})
        commits[name] = store.capture(
            "current" if name in ("old-current", "needed") else "other"
        ).commit
    now = time.time() + 3 * 86400  # every checkpoint is older than a day at `now`
    write(project, {"f.txt": "fresh"})
    later = store.capture("other").commit
    report = store.prune(current="current", needed={commits["needed"]}, now=now)
    alive = {c for _, c, _ in store.refs()}
    assert commits["old-other"] not in alive and commits["fresh-other"] not in alive
    assert later not in alive  # everything of "other" is older than 1 day at `now`
    assert commits["old-current"] in alive and commits["needed"] in alive
    assert report.deleted == 3
    # Unreferenced objects stay an hour (another process may be about to reference them).
    assert store.exists(commits["old-other"])
    store.git.run(["prune", "--expire=now"])
    assert not store.exists(commits["old-other"])
    assert store.exists(commits["needed"])


def test_the_size_limit_prunes_oldest_first_but_never_the_needed(
    project: Path, open_store: OpenStore
) -> None:
    store = open_store(max_store_bytes=1)  # impossible to meet: everything not needed goes
    kept = []
    for i in range(6):
        (project / "data.bin").write_bytes(os.urandom(20_000) + bytes([i]))
        kept.append(store.capture("current").commit)
    store.prune(current="current", needed={kept[-1]})
    assert {c for _, c, _ in store.refs()} == {kept[-1]}


def test_two_processes_capture_the_same_folder_safely(project: Path, state_root: Path) -> None:
    write(project, {f"f{i}.txt": str(i) for i in range(50)})
    script = (
        "import sys, pathlib\n"
        "from pitui.checkpoint.store import CheckpointStore\n"
        "from pitui.checkpoint.settings import CheckpointSettings\n"
        "root, folder, me = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]\n"
        "store = CheckpointStore.open(folder, CheckpointSettings(), root)\n"
        "for i in range(15):\n"
        "    (folder / f'{me}-{i}.txt').write_text(me)\n"
        "    c = store.capture(me)\n"
        "    assert f'{me}-{i}.txt' in store.files(c.commit), i\n"
        "print('ok')\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(state_root), str(project), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one", "two")
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    store = CheckpointStore.open(project, CheckpointSettings(), state_root)
    fsck = store.git.run(["fsck", "--strict", "--no-dangling"], check=False)
    assert b"error" not in fsck.lower()
    final = store.capture("check")
    assert {f"one-{i}.txt" for i in range(15)} <= set(store.files(final.commit))
    assert len({c for ns, c, _ in store.refs() if ns in ("one", "two")}) >= 15


CAPTURE_LOOP = """
import sys, pathlib
from pitui.checkpoint.store import CheckpointStore
from pitui.checkpoint.settings import CheckpointSettings
root, folder = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
store = CheckpointStore.open(folder, CheckpointSettings(), root)
print("ready", flush=True)
round_ = 0
while True:
    round_ += 1
    for i in range(600):
        (folder / f"d{i % 9}" / f"f{i}.txt").write_text(f"round {round_} {i}\\n" * 30)
    store.capture("loop")
"""


def test_kill_9_during_captures_never_stops_the_next_one(project: Path, state_root: Path) -> None:
    """pitui and its git killed together (kill -9 of the process group) at random points of
    captures, a third of the time while git holds the store's index lock: the next capture
    always succeeds and holds the folder as it is, and the store stays sound."""
    rng = random.Random(29)
    write(project, {f"d{i % 9}/f{i}.txt": "start\n" for i in range(600)})
    store = CheckpointStore.open(project, CheckpointSettings(), state_root)
    store.capture("check")
    index_lock = store.folder / "index.lock"
    stale = 0
    for round_ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", CAPTURE_LOOP, str(state_root), str(project)],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        if round_ % 3 == 0:
            deadline = time.monotonic() + 20
            while not index_lock.exists() and time.monotonic() < deadline:
                time.sleep(0.0005)
        else:
            time.sleep(rng.uniform(0.05, 1.5))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        time.sleep(0.05)  # git children are reaped by init; let them go
        stale += index_lock.exists()
        (project / "latest.txt").write_text(f"after kill {round_}\n")
        capture = store.capture("check")
        files = store.files(capture.commit)
        blob = store.read_blobs([files["latest.txt"][1]])
        assert blob.popitem()[1] == f"after kill {round_}\n".encode()
        assert not index_lock.exists()
    assert stale >= 3, stale  # the hard case (a lock left behind) was really exercised
    fsck = store.git.run(["fsck", "--strict", "--no-dangling"], check=False)
    assert b"error" not in fsck.lower()


def test_maintenance_prunes_at_once_when_the_store_is_over_its_cap(
    project: Path, open_store: OpenStore
) -> None:
    """Pruning by age runs once a day, but a store over its cap is pruned after the run that
    took it there, down to the cap, keeping what the current branch needs."""
    store = open_store(max_store_bytes=3 * 1024 * 1024, skip_binary_churn=False)
    store.maintain(current="current", needed=())  # the daily prune: done for today
    old = []
    for _ in range(5):
        (project / "data.bin").write_bytes(os.urandom(1024 * 1024))
        old.append(store.capture("other").commit)
    (project / "data.bin").write_bytes(os.urandom(1024 * 1024))
    mine = store.capture("current").commit
    assert store.size_bytes() > 3 * 1024 * 1024
    report = store.maintain(current="current", needed={mine})
    assert report is not None and report.size <= 3 * 1024 * 1024
    assert store.size_bytes() <= 3 * 1024 * 1024
    alive = {c for _, c, _ in store.refs()}
    gone = set(old) - alive
    assert mine in alive and len(gone) >= 3
    assert store.exists(mine) and not any(store.exists(c) for c in gone)  # dropped at once


def test_a_big_first_capture_writes_one_pack(project: Path, open_store: OpenStore) -> None:
    """A first capture of many files writes them into one pack (git 2.37+), not one loose
    object per file; later small captures add loose objects; restores read both."""
    write(project, {f"src/m{i % 20}/f{i}.py": f"x = {i}\n" * 20 for i in range(1500)})
    store = open_store()
    first = store.capture("s")
    if not store.bulk_checkin:
        pytest.skip("git older than 2.37 writes loose objects")
    packs = list((store.git.git_dir / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    assert len(store.files(first.commit)) == 1500
    write(project, {"src/m0/f0.py": "changed\n"})
    second = store.capture("s")
    assert store.loose_objects() >= 1
    blobs = store.read_blobs([store.files(first.commit)["src/m0/f0.py"][1]])
    assert blobs.popitem()[1] == b"x = 0\n" * 20
    assert [c.path for c in store.changes(first.commit, second.commit)] == ["src/m0/f0.py"]
