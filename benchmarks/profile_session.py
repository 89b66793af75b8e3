"""Where the time goes: phases and cProfile of open + project (200k) and of leaf moves (20k).

    python benchmarks/profile_session.py [--top 20]

Run ``benchmarks/run.py`` (or ``generate.py``) first so the session files exist. Writes the full
profiles to ``benchmarks/results/profile-*.txt`` and prints the top entries and a phase table.
The phase table times each step the loader and store take, separately and without a profiler
(cProfile inflates the cost of small Python calls, so trust the phases for absolute figures).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import random
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / ".data"
RESULTS_DIR = HERE / "results"
SEED = 1


def data_file(size: str) -> Path:
    return DATA_DIR / f"session-{size}-s{SEED}.jsonl"


def timed(label: str, fn: Callable[[], Any], out: list[tuple[str, float]]) -> Any:
    t0 = time.perf_counter()
    value = fn()
    out.append((label, time.perf_counter() - t0))
    return value


def phases(path: Path) -> list[tuple[str, float]]:
    """Each step of open + project on its own, in this order, with gc as the loader sets it."""
    import msgspec

    from pitui.session import loader
    from pitui.session.index import link_nodes
    from pitui.session.node import Node
    from pitui.session.store import SessionStore

    out: list[tuple[str, float]] = []
    data = timed("read file (one read)", path.read_bytes, out)
    lines = timed("split into lines", lambda: data.split(b"\n"), out)
    gc.disable()
    decoder = msgspec.json.Decoder(Node)  # what the loader's fast path decodes each line into
    skeletons = timed(
        "msgspec skeleton decode, every line",
        lambda: [decoder.decode(raw) for raw in lines[1:] if raw],
        out,
    )
    del skeletons
    result = timed(
        "load_session_file (read + decode + Node)", lambda: loader.load_session_file(path), out
    )
    nodes = result.nodes
    del result
    gc.disable()
    warnings: list[Any] = []
    timed("link_nodes (parent/children/depth)", partial(link_nodes, nodes, warnings), out)
    gc.enable()
    store = timed("SessionStore.open, total", lambda: SessionStore.open(path, read_only=True), out)
    timed("project at leaf (cold)", store.project, out)
    timed("gc.collect() with the store alive", gc.collect, out)
    gc.freeze()
    timed("gc.collect() after gc.freeze()", gc.collect, out)
    gc.unfreeze()
    del nodes
    timed("drop the store (dealloc) + gc.collect()", lambda: (store.close(), gc.collect()), out)
    return out


def profile(fn: Callable[[], Any], name: str, top: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    full = io.StringIO()
    stats = pstats.Stats(profiler, stream=full)
    stats.sort_stats("tottime").print_stats(60)
    stats.sort_stats("cumulative").print_stats(40)
    (RESULTS_DIR / f"profile-{name}.txt").write_text(full.getvalue())
    short = io.StringIO()
    pstats.Stats(profiler, stream=short).sort_stats("tottime").print_stats(top)
    text = short.getvalue()
    start = text.find("   ncalls")
    return text[start:] if start >= 0 else text


def open_project_200k() -> None:
    from pitui.session.store import SessionStore

    store = SessionStore.open(data_file("200k"), read_only=True)
    store.project()


def leaf_moves_20k() -> None:
    from pitui.session.store import SessionStore

    store = SessionStore.open(data_file("20k"), read_only=True)
    store.project()
    ids = [n.id for n in store.nodes()]
    for target in random.Random(SEED).sample(ids, 500):
        store.branch(target)
        store.project()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--only", choices=("phases", "open", "leaf"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for size in ("20k", "200k"):
        if not data_file(size).exists():
            print(f"missing {data_file(size)}: run benchmarks/run.py first", file=sys.stderr)
            return 2
    if args.only is None:
        # Each part in a fresh interpreter, so one does not warm up (or bloat) the next.
        for part in ("phases", "open", "leaf"):
            cmd = [sys.executable, __file__, "--top", str(args.top), "--only", part]
            subprocess.run(cmd, check=True)
        return 0
    if args.only == "phases":
        print("phases of open + project, 200k file (each step timed alone, no profiler)")
        for label, seconds in phases(data_file("200k")):
            print(f"  {label:<44} {seconds * 1e3:8.1f} ms")
    elif args.only == "open":
        print("\ncProfile: open + project at the leaf, 200k file (top by own time)")
        print(profile(open_project_200k, "open-200k", args.top))
    else:
        print("\ncProfile: open + 500 random leaf moves + project, 20k file (top by own time)")
        print(profile(leaf_moves_20k, "leaf-move-20k", args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
