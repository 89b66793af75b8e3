"""Workspace checkpoints: incremental capture and restore on a 10,000-file repository; the
first capture of a new 20,000-file project against git's floor.

    python benchmarks/checkpoint_bench.py [--runs N] [--files N] [--first-files N]
                                          [--first-runs N] [--no-first] [--json]

Builds (seeded, once) a git repository of 10,000 files in ``benchmarks/.data/checkpoint-repo``
(a fresh pitui checkpoint store each run, in a temporary folder), then measures in-process what
the agent's thread does:

- an incremental checkpoint after 10 files changed (target < 300 ms);
- a restore of 100 changed files (40 modified, 30 deleted, 30 added), the pre-restore checkpoint
  included (target < 500 ms);
- for scale, ``git status --porcelain`` on the same repository (what any git tool pays).

The first capture (issue 29): a new project of ``--first-files`` files (20,000; no ``.git``,
seeded, built once in ``benchmarks/.data/first-capture-N``), a fresh store each round:

- pitui's first capture (open the store, capture) against ``git add -A`` into a separate, new
  ``GIT_DIR`` (the floor: what git itself needs to hash and store every file), in alternating
  order (ABBA), target: at most 1.2x the floor;
- what the agent's first write waits for its before-change checkpoint when the capture was
  started as the session opened (the TUI does), against checkpoints off.

Medians over ``--runs`` rounds (``--first-runs``, default 4, for the first capture: each round
captures 20,000 files twice; the machine is noisy: 2 shared cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pitui.agent.tools.write import WriteTool  # noqa: E402
from pitui.agent.workspace import Workspace  # noqa: E402
from pitui.checkpoint.git import clean_environment  # noqa: E402
from pitui.checkpoint.restore import restore  # noqa: E402
from pitui.checkpoint.settings import CheckpointSettings, WorkspaceSettings  # noqa: E402
from pitui.checkpoint.store import CheckpointStore  # noqa: E402
from pitui.session import SessionStore  # noqa: E402

SEED = 7
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]


def build_repo(folder: Path, files: int) -> list[Path]:
    marker = folder / ".complete"
    if marker.exists() and int(marker.read_text()) == files:
        return sorted(p for p in folder.rglob("*.py"))
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(SEED)
    paths = []
    for i in range(files):
        path = folder / f"pkg{i % 40}" / f"mod{i % 13}" / f"file{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(rng.randint(10, 120))]
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    (folder / ".gitignore").write_text("build/\n*.log\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@x", "-C", str(folder)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], check=True)
    marker.write_text(str(files))
    return sorted(paths)


def build_plain(folder: Path, files: int) -> None:
    """A new project (no ``.git``) of ``files`` source files, seeded, built once."""
    marker = folder / ".complete"
    if marker.exists() and int(marker.read_text()) == files:
        return
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(SEED + 1)
    for i in range(files):
        path = folder / f"src{i % 50}" / f"part{i % 17}" / f"module{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choices(WORDS, k=8)) for _ in range(rng.randint(10, 120))]
        path.write_text("\n".join(lines) + "\n")
    marker.write_text(str(files))


def git_floor(project: Path, scratch: Path) -> float:
    """``git add -A`` of ``project`` into a new, separate GIT_DIR (no user or system config)."""
    git_dir = scratch / "floor.git"
    env = clean_environment({"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(project)})
    subprocess.run(
        ["git", "init", "-q", "--bare", str(git_dir)], env=clean_environment({}), check=True
    )
    started = time.perf_counter()
    subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
    return time.perf_counter() - started


def pitui_first_capture(project: Path, scratch: Path) -> float:
    started = time.perf_counter()
    store = CheckpointStore.open(project, CheckpointSettings(), scratch / "state")
    store.capture()
    return time.perf_counter() - started


async def first_write_wait(project: Path, scratch: Path, enabled: bool) -> float:
    """The before-change step of the agent's first write, the capture started at open."""
    session = SessionStore.in_memory(str(project))
    workspace = Workspace(
        WorkspaceSettings(checkpoint=CheckpointSettings(enabled=enabled)),
        project,
        state_root=scratch / "state",
    )
    workspace.attach_store(session)
    workspace.start_warm_up()  # as the TUI does when the session opens
    await workspace.warmed()
    target = project / ".bench-first-write.txt"
    started = time.perf_counter()
    await workspace.guard(WriteTool(), {"path": str(target), "content": "x"})
    return time.perf_counter() - started


def first_capture(files: int, runs: int) -> dict[str, object]:
    project = HERE / ".data" / f"first-capture-{files}"
    build_plain(project, files)
    floors: list[float] = []
    firsts: list[float] = []
    for round_ in range(runs):
        order = ("floor", "pitui") if round_ % 4 in (0, 3) else ("pitui", "floor")
        for what in order:
            scratch = Path(tempfile.mkdtemp(prefix="pitui-first-"))
            try:
                if what == "floor":
                    floors.append(git_floor(project, scratch))
                else:
                    firsts.append(pitui_first_capture(project, scratch))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    waits: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for enabled in (True, False):
            scratch = Path(tempfile.mkdtemp(prefix="pitui-first-"))
            try:
                waits[enabled].append(asyncio.run(first_write_wait(project, scratch, enabled)))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    ratio = statistics.median(firsts) / statistics.median(floors)
    return {
        "files": files,
        "pitui_first_capture_ms": median_ms(firsts),
        "git_add_floor_ms": median_ms(floors),
        "ratio": ratio,
        "pass_first_capture": ratio <= 1.2,
        "first_write_wait_ms": median_ms(waits[True]),
        "first_write_wait_off_ms": median_ms(waits[False]),
    }


def median_ms(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"median": statistics.median(ms), "min": min(ms), "max": max(ms), "n": len(ms)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--first-files", type=int, default=20_000)
    parser.add_argument(
        "--first-runs", type=int, default=4, help="rounds of the first capture (~30 s each)"
    )
    parser.add_argument("--no-first", action="store_true", help="skip the first-capture part")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(SEED)
    repo = HERE / ".data" / "checkpoint-repo"
    paths = build_repo(repo, args.files)
    state = Path(tempfile.mkdtemp(prefix="pitui-cp-bench-"))
    try:
        store = CheckpointStore.open(repo, CheckpointSettings(), state)
        started = time.perf_counter()
        first = store.capture("bench")
        cold = time.perf_counter() - started
        store.capture("bench")  # the index is warm from here on

        incremental = []
        for _ in range(args.runs):
            for path in rng.sample(paths, 10):
                with open(path, "a") as f:
                    f.write(f"# changed {rng.random()}\n")
            t0 = time.perf_counter()
            store.capture("bench")
            incremental.append(time.perf_counter() - t0)

        status = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True)
            status.append(time.perf_counter() - t0)

        # Restore: state A, then 100 files change (B); restoring alternates between them.
        a = store.capture("bench")
        chosen = rng.sample(paths, 70)
        for path in chosen[:40]:
            path.write_text(path.read_text() + "# B\n")
        for path in chosen[40:]:
            path.unlink()
        added = [repo / "added" / f"new{i}.py" for i in range(30)]
        for path in added:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("new in B\n" * 20)
        b = store.capture("bench")
        changed = len(store.changes(a.commit, b.commit))
        restores = []
        target = a
        for _ in range(args.runs):
            t0 = time.perf_counter()
            result = restore(store, target.commit, namespace="bench")
            restores.append(time.perf_counter() - t0)
            assert len(result.written) + len(result.deleted) == changed, result
            target = b if target is a else a
        if target is b:  # leave the repository as it was built (state A)
            restore(store, a.commit, namespace="bench")
        restore(store, first.commit, namespace="bench")
    finally:
        shutil.rmtree(state, ignore_errors=True)

    report = {
        "files": args.files,
        "first_capture_s": cold,
        "incremental_10_changed_ms": median_ms(incremental),
        "git_status_ms": median_ms(status),
        "restore_100_changed_ms": median_ms(restores),
        "restore_changed_files": changed,
        "pass_incremental": statistics.median(incremental) < 0.300,
        "pass_restore": statistics.median(restores) < 0.500,
    }
    if not args.no_first:
        report["first_capture"] = first_capture(args.first_files, args.first_runs)
    if args.json:
        print(json.dumps(report))
        return 0
    inc, st, rs = (
        report["incremental_10_changed_ms"],
        report["git_status_ms"],
        report["restore_100_changed_ms"],
    )
    print(f"repository: {args.files:,} files; first checkpoint {cold:.2f} s (once per folder)")
    print(
        f"incremental checkpoint, 10 files changed: median {inc['median']:.0f} ms "
        f"(min {inc['min']:.0f}, max {inc['max']:.0f}); target < 300 ms: "
        f"{'PASS' if report['pass_incremental'] else 'FAIL'}"
    )
    print(
        f"  for scale, git status --porcelain: median {st['median']:.0f} ms "
        f"(checkpoint / status = {inc['median'] / st['median']:.2f})"
    )
    print(
        f"restore {changed} changed files (pre-restore checkpoint included): median "
        f"{rs['median']:.0f} ms (min {rs['min']:.0f}, max {rs['max']:.0f}); target < 500 ms: "
        f"{'PASS' if report['pass_restore'] else 'FAIL'}"
    )
    first = report.get("first_capture")
    if isinstance(first, dict):
        mine, floor = first["pitui_first_capture_ms"], first["git_add_floor_ms"]
        wait, off = first["first_write_wait_ms"], first["first_write_wait_off_ms"]
        print(
            f"first capture of a new {first['files']:,}-file project: median "
            f"{mine['median'] / 1000:.2f} s (min {mine['min'] / 1000:.2f}, max "
            f"{mine['max'] / 1000:.2f}); git add -A into a separate GIT_DIR: median "
            f"{floor['median'] / 1000:.2f} s (min {floor['min'] / 1000:.2f}, max "
            f"{floor['max'] / 1000:.2f}); ratio {first['ratio']:.2f}, target <= 1.2: "
            f"{'PASS' if first['pass_first_capture'] else 'FAIL'}"
        )
        print(
            f"  the first write's checkpoint wait, capture started at open: median "
            f"{wait['median']:.0f} ms (checkpoints off: {off['median']:.1f} ms)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
