"""Workspace checkpoints on a 10,000-file repository: incremental capture and restore.

    python benchmarks/checkpoint_bench.py [--runs N] [--files N] [--json]

Builds (seeded, once) a git repository of 10,000 files in ``benchmarks/.data/checkpoint-repo``
(a fresh pitui checkpoint store each run, in a temporary folder), then measures in-process what
the agent's thread does:

- an incremental checkpoint after 10 files changed (target < 300 ms);
- a restore of 100 changed files (40 modified, 30 deleted, 30 added), the pre-restore checkpoint
  included (target < 500 ms);
- for scale, ``git status --porcelain`` on the same repository (what any git tool pays).

Medians over ``--runs`` rounds (the machine is noisy: 2 shared cores).
"""

from __future__ import annotations

import argparse
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

from pitui.checkpoint.restore import restore  # noqa: E402
from pitui.checkpoint.settings import CheckpointSettings  # noqa: E402
from pitui.checkpoint.store import CheckpointStore  # noqa: E402

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


def median_ms(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"median": statistics.median(ms), "min": min(ms), "max": max(ms), "n": len(ms)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=10_000)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
