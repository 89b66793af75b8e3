"""tiktoken counts of the 200k session's leaf projection: cold, unchanged, and after one append.

    python benchmarks/tiktoken_bench.py [--runs 7] [--appends 50]

Target (docs/performance.md): < 200 ms the first time on the 200k file's leaf projection,
< 10 ms after an append (cached per entry). Loading an encoding is timed apart, in fresh
interpreters (it happens once per process and can be done ahead, off the UI thread).
Generates ``benchmarks/.data/session-200k-s1.jsonl`` when missing.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / ".data"
DATA_FILE = DATA_DIR / "session-200k-s1.jsonl"
ENCODINGS = ("o200k_base", "cl100k_base")

LOAD_CHILD = """\
import sys, time
t0 = time.perf_counter()
from pitui.compaction.tiktoken_count import load_encoding
t1 = time.perf_counter()
load_encoding(sys.argv[1])
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def ensure_data() -> None:
    if DATA_FILE.exists():
        return
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    print(f"generating {DATA_FILE.name} ...", flush=True)
    command = [sys.executable, str(HERE / "generate.py"), "--entries", "200000", "--seed", "1"]
    subprocess.run([*command, str(DATA_FILE)], check=True)


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    return (
        f"median {statistics.median(ordered) * 1e3:8.2f} ms"
        f"  (min {ordered[0] * 1e3:.2f}, max {ordered[-1] * 1e3:.2f}, n={len(ordered)})"
    )


def load_times(encoding: str, runs: int) -> tuple[list[float], list[float]]:
    imports: list[float] = []
    loads: list[float] = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", LOAD_CHILD, encoding], capture_output=True, text=True, check=True
        ).stdout.split()
        imports.append(float(out[0]))
        loads.append(float(out[1]))
    return imports, loads


def user_message(rng: random.Random) -> dict[str, Any]:
    words = ["append", "token", "count", "cache", "leaf", "entry", "budget", "tree", "context"]
    text = " ".join(rng.choices(words, k=70))[:450]
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "timestamp": time.time_ns() // 1_000_000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="cold counts and encoding loads")
    parser.add_argument("--appends", type=int, default=50, help="appends, each counted once")
    args = parser.parse_args()
    ensure_data()

    from pitui.compaction.tiktoken_count import TiktokenEstimator, load_encoding
    from pitui.session.store import SessionStore

    print("encoding load (fresh interpreter each run):")
    for encoding in ENCODINGS:
        imports, loads = load_times(encoding, args.runs)
        print(f"  import module     {ms(imports)}")
        print(f"  load {encoding:<12} {ms(loads)}")

    rng = random.Random(1)
    with tempfile.TemporaryDirectory(dir=DATA_DIR, prefix="tiktoken-") as tmp:
        copy = Path(tmp) / DATA_FILE.name
        shutil.copyfile(DATA_FILE, copy)
        store = SessionStore.open(copy)
        projection = store.project()
        chars = sum(len(str(m)) for m in projection.messages)
        print(
            f"leaf projection: {len(projection.messages)} messages, "
            f"~{chars / 1e6:.1f} MB as Python repr"
        )
        for encoding in ENCODINGS:
            load_encoding(encoding)
            cold: list[float] = []
            total = 0
            for _ in range(args.runs):
                estimator = TiktokenEstimator(encoding)  # empty cache, encoding already loaded
                t0 = time.perf_counter()
                total, _per = estimator.count_projection(projection)
                cold.append(time.perf_counter() - t0)
            unchanged: list[float] = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                estimator.count_projection(projection)
                unchanged.append(time.perf_counter() - t0)
            appended: list[float] = []
            for _ in range(args.appends):
                store.append_message(user_message(rng))
                grown = store.project()
                t0 = time.perf_counter()
                estimator.count_projection(grown)
                appended.append(time.perf_counter() - t0)
            print(f"{encoding}: {total:,} tokens at the leaf")
            print(f"  cold (empty cache)      {ms(cold)}")
            print(f"  unchanged (all cached)  {ms(unchanged)}")
            print(f"  after one append        {ms(appended)}")
            projection = store.project()
        store.close()


if __name__ == "__main__":
    main()
