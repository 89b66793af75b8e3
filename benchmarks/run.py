"""Session benchmarks: open + project, peak memory, appends and leaf moves, against pi's figures.

    python benchmarks/run.py [--quick] [--runs N] [--regenerate]
    python benchmarks/run.py --tui [--quick] [--groups G,...] [--sizes 2k,20k,...] [--runs N]
    python benchmarks/run.py --all [--quick]      (the above, then the TUI benchmarks)

``--tui`` runs only the TUI benchmarks in a real terminal (``tui_bench.py``: tmux, pitui beside
pi 1.6 on one scripted model; ~25 minutes, ``--quick`` ~8); every option after it goes to
``tui_bench.py`` (``--help`` there lists them).

Generates the 20k and 200k sessions into ``benchmarks/.data/`` when missing (seeded, see
``generate.py``), prints a table (median, min, max) with ratios to pi's reference figures and
PASS/FAIL per target of ``docs/performance.md``, and writes ``benchmarks/results/latest.json``.
Every measurement runs in a fresh child interpreter so one does not warm up the next.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / ".data"
RESULTS_DIR = HERE / "results"
SEED = 1
SIZES = {"20k": 20_000, "200k": 200_000}


# pi 1.6.0 on Node 20, same kind of machine (docs/performance.md): seconds and MiB.
@dataclass(frozen=True)
class PiRef:
    whole: tuple[float, float]  # whole process, open + print context (s)
    rss: float  # peak RSS (MB)
    open: float  # in-process parse + index (s)
    context: tuple[float, float]  # in-process build context (s)


PI = {
    "20k": PiRef(whole=(0.27, 0.27), rss=99.0, open=0.090, context=(0.003, 0.006)),
    "200k": PiRef(whole=(1.1, 1.3), rss=310.0, open=1.000, context=(0.070, 0.070)),
}

# What a fresh `pitui --session FILE` would do first: open, project at the leaf, use the result.
OPEN_PROJECT = """\
import sys
from pitui.session.store import SessionStore
store = SessionStore.open(sys.argv[1], read_only=True)
print(len(store.project().messages))
"""
IMPORT_ONLY = """\
import sys
from pitui.session.store import SessionStore
print(0)
"""
# A dedicated parent for one measured child, so RUSAGE_CHILDREN is that child's peak RSS alone.
WRAPPER = """\
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t0
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "rss_kib": rss_kib, "rc": proc.returncode,
                  "out": proc.stdout.strip(), "err": proc.stderr[-2000:]}))
"""


# ---------------------------------------------------------------------------------- helpers


def data_file(size: str) -> Path:
    return DATA_DIR / f"session-{size}-s{SEED}.jsonl"


def ensure_data(regenerate: bool) -> dict[str, dict[str, Any]]:
    sys.path.insert(0, str(HERE))
    from generate import generate  # a sibling script, not a package

    info: dict[str, dict[str, Any]] = {}
    for size, entries in SIZES.items():
        path = data_file(size)
        if regenerate or not path.exists():
            print(f"generating {path.name} ({entries:,} entries, seed {SEED}) ...", flush=True)
            stats = generate(entries, SEED, path)
            print(
                f"  {stats['bytes'] / 1e6:.1f} MB, {stats['bytes_per_entry']} B/entry, "
                f"{stats['compactions']} compactions, {stats['forks']} forks",
                flush=True,
            )
        info[size] = {"path": str(path), "bytes": path.stat().st_size, "entries": entries}
    return info


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "p90": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
        "n": len(ordered),
    }


def run_child(task: str, *args: str) -> dict[str, Any]:
    """Run ``run.py --child TASK ARGS`` in a fresh interpreter; it prints one JSON object."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", task, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child {task} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def whole_process(code: str, path: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-c", WRAPPER, sys.executable, "-c", code, str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(proc.stdout)
    if result["rc"] != 0:
        raise RuntimeError(f"open + project child failed:\n{result['err']}")
    return result


# ---------------------------------------------------------------------------------- children


def child_open(path: str) -> dict[str, Any]:
    """In-process split of open + project at the leaf (fresh interpreter, default gc)."""
    t0 = time.perf_counter()
    from pitui.session.store import SessionStore

    t1 = time.perf_counter()
    store = SessionStore.open(path, read_only=True)
    t2 = time.perf_counter()
    projection = store.project()
    t3 = time.perf_counter()
    again = store.project()
    t4 = time.perf_counter()
    assert again is projection
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "import": t1 - t0,
        "open": t2 - t1,
        "project": t3 - t2,
        "project_cached": t4 - t3,
        "messages": len(projection.messages),
        "context_entries": len(projection.context_entry_ids),
        "entries": len(store),
        "rss_kib": rss_kib,
    }


def user_message(rng: random.Random) -> dict[str, Any]:
    words = [
        "append",
        "session",
        "latency",
        "budget",
        "render",
        "tree",
        "leaf",
        "node",
        "cache",
        "header",
        "context",
    ]
    text = " ".join(rng.choices(words, k=70))[:450]
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "timestamp": time.time_ns() // 1_000_000,
    }


def child_append(path: str, count: str) -> dict[str, Any]:
    """Appends on a writable copy: the first one apart, then ``count`` timed one by one."""
    from pitui.session.store import SessionStore

    rng = random.Random(SEED)
    n = int(count)
    with tempfile.TemporaryDirectory(dir=DATA_DIR, prefix="append-") as tmp:
        copy = Path(tmp) / Path(path).name
        shutil.copyfile(path, copy)
        store = SessionStore.open(copy)
        assert not store.read_only, store.read_only_reason
        store.project()  # the app holds the projection at the leaf before the user sends
        append_s: list[float] = []
        total_s: list[float] = []
        first: dict[str, float] = {}
        line_bytes = 0
        for i in range(n + 1):
            message = user_message(rng)
            t0 = time.perf_counter()
            entry_id = store.append_message(message)
            t1 = time.perf_counter()
            projection = store.project()
            t2 = time.perf_counter()
            assert projection.leaf_id == entry_id
            if i == 0:
                first = {"append": t1 - t0, "append_project": t2 - t0}
                line_bytes = len(store.raw_line(store.node(entry_id))) + 1
            else:
                append_s.append(t1 - t0)
                total_s.append(t2 - t0)
        store.close()
    return {
        "first": first,
        "append": summary(append_s),
        "append_project": summary(total_s),
        "line_bytes": line_bytes,
    }


def child_leaf_move(path: str, count: str) -> dict[str, Any]:
    """``branch(id)`` + ``project()`` to ``count`` seeded random entries, then the same again."""
    from pitui.session.store import SessionStore

    store = SessionStore.open(path, read_only=True)
    store.project()
    ids = [n.id for n in store.nodes()]
    targets = random.Random(SEED).sample(ids, int(count))
    passes: list[list[float]] = []
    sizes: list[int] = []
    for _ in range(2):
        times: list[float] = []
        for target in targets:
            t0 = time.perf_counter()
            store.branch(target)
            projection = store.project()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            sizes.append(len(projection.messages))
        passes.append(times)
    return {
        "first_pass": summary(passes[0]),
        "second_pass": summary(passes[1]),
        "context_messages": summary([float(s) for s in sizes]),
    }


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "open": child_open,
    "append": child_append,
    "leaf_move": child_leaf_move,
}


# ---------------------------------------------------------------------------------- report


@dataclass
class Row:
    name: str
    file: str
    unit: str  # "s", "ms", "MB"
    stats: dict[str, float]
    pi: str = ""
    ratio: float | None = None
    target: str = ""
    verdict: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.3f}"
    if unit == "ms":
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return f"{value:.0f}"


def ms_range(lo: float, hi: float) -> str:
    return f"{lo * 1e3:.0f} ms" if lo == hi else f"{lo * 1e3:.0f}-{hi * 1e3:.0f} ms"


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'measure':<44} {'file':<5} {'median':>9} {'min':>9} {'max':>9} {'unit':<4} "
        f"{'pi':>11} {'ours/pi':>7}  {'target':<24} verdict"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else ""
        print(
            f"{r.name:<44} {r.file:<5} {fmt(r.stats['median'], r.unit):>9} "
            f"{fmt(r.stats['min'], r.unit):>9} {fmt(r.stats['max'], r.unit):>9} {r.unit:<4} "
            f"{r.pi:>11} {ratio:>7}  {r.target:<24} {r.verdict}"
        )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


OTHER_BENCHMARKS = {
    "startup": ["startup_bench.py", "--json"],
    "tree_browser": ["tree_browser_bench.py"],
    "tiktoken": ["tiktoken_bench.py"],
    "cache_cost": ["cache_cost_bench.py"],
    "export": ["export_bench.py"],
    "hostile_sizes": ["hostile_sizes.py"],
    "checkpoints": ["checkpoint_bench.py"],
}


def run_other_benchmarks(quick: bool) -> dict[str, Any]:
    """The start-up, tree browser, tiktoken, prompt-cache cost, HTML export, hostile-size and
    checkpoint benchmarks, each in its own process."""
    out: dict[str, Any] = {}
    for name, command in OTHER_BENCHMARKS.items():
        argv = [sys.executable, str(HERE / command[0]), *command[1:]]
        if quick and name != "cache_cost":
            argv += ["--runs", "3"]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        text = result.stdout.strip()
        print(f"\n== {name} ==")
        if name == "startup" and text:
            data = json.loads(text.splitlines()[-1])
            out[name] = data
            print(
                f"pitui start to first frame: median {data['median_s']:.3f} s "
                f"(min {data['min_s']:.3f}, max {data['max_s']:.3f}); litellm imported: "
                f"{data['litellm_imported']}; target < 0.5 s: "
                f"{'PASS' if data['pass'] else 'FAIL'}"
            )
        else:
            out[name] = {"output": text, "exit_code": result.returncode}
            print(text or result.stderr.strip()[-2000:])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (3 instead of 7)")
    parser.add_argument("--runs", type=int, default=None, help="runs per whole-process figure")
    parser.add_argument("--regenerate", action="store_true", help="regenerate the session files")
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--moves", type=int, default=500)
    parser.add_argument(
        "--session-only",
        action="store_true",
        help="skip the UI, start-up and tiktoken benchmarks",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument(
        "--tui",
        action="store_true",
        help="only the TUI benchmarks (tui_bench.py; other options go to it)",
    )
    parser.add_argument("--all", action="store_true", help="these benchmarks, then --tui")
    args, rest = parser.parse_known_args(argv)
    if args.tui or args.all:
        sys.path.insert(0, str(HERE))
        import tui_bench  # a sibling script

        if args.tui:
            tui_args = [*rest, *(["--quick"] if args.quick else [])]
            tui_args += ["--runs", str(args.runs)] if args.runs else []
            return int(tui_bench.main(tui_args))
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")

    if args.child:
        task, *rest = args.child
        print(json.dumps(CHILDREN[task](*rest)))
        return 0

    runs = args.runs or (3 if args.quick else 7)
    started = time.time()
    files = ensure_data(args.regenerate)
    rows: list[Row] = []
    raw: dict[str, Any] = {}

    # Python + import baseline: what every whole-process figure includes before any work.
    base = [whole_process(IMPORT_ONLY, data_file("20k")) for _ in range(runs)]
    rows.append(
        Row(
            "python start + import store (baseline)",
            "-",
            "s",
            summary([b["wall"] for b in base]),
            extra={"rss_mib": summary([b["rss_kib"] / 1024 for b in base])},
        )
    )
    raw["baseline"] = base

    for size in ("200k", "20k"):
        path = data_file(size)
        pi = PI[size]
        whole_process(OPEN_PROJECT, path)  # warm the page cache; not counted
        results = [whole_process(OPEN_PROJECT, path) for _ in range(runs)]
        raw[f"whole_{size}"] = results
        wall = summary([r["wall"] for r in results])
        rss = summary([r["rss_kib"] / 1024 for r in results])
        pi_lo, pi_hi = pi.whole
        pi_mid = (pi_lo + pi_hi) / 2
        row = Row(
            "open + project, whole process",
            size,
            "s",
            wall,
            pi=f"{pi_lo:.2f}-{pi_hi:.2f} s" if pi_lo != pi_hi else f"{pi_lo:.2f} s",
            ratio=wall["median"] / pi_mid,
            extra={"messages": results[0]["out"]},
        )
        if size == "200k":
            row.target = f"<= {pi_lo / 2:.2f} s (1/2 pi low)"
            row.verdict = verdict(wall["median"] <= pi_lo / 2)
        rows.append(row)
        rss_row = Row(
            "peak RSS, open + project (whole process)",
            size,
            "MB",
            rss,
            pi=f"{pi.rss:.0f} MB",
            ratio=rss["median"] / pi.rss,
        )
        if size == "200k":
            rss_row.target = f"< {pi.rss:.0f} MB (pi)"
            rss_row.verdict = verdict(rss["max"] < pi.rss)
        rows.append(rss_row)

        splits = [run_child("open", str(path)) for _ in range(runs)]
        raw[f"inproc_{size}"] = splits
        ctx_lo, ctx_hi = pi.context
        for key, label, pi_s in (
            ("open", "in-process: open (read + index)", f"{pi.open * 1e3:.0f} ms"),
            ("project", "in-process: project at leaf (cold)", ms_range(ctx_lo, ctx_hi)),
        ):
            st = summary([s[key] * 1e3 for s in splits])
            ref = pi.open if key == "open" else (ctx_lo + ctx_hi) / 2
            rows.append(Row(label, size, "ms", st, pi=pi_s, ratio=st["median"] / (ref * 1e3)))
        st = summary([(s["open"] + s["project"]) * 1e3 for s in splits])
        pi_inproc = pi.open + (ctx_lo + ctx_hi) / 2
        rows.append(
            Row(
                "in-process: open + project",
                size,
                "ms",
                st,
                pi=f"{pi_inproc * 1e3:.0f} ms",
                ratio=st["median"] / (pi_inproc * 1e3),
                extra={"context_messages": splits[0]["messages"]},
            )
        )

    append_medians: dict[str, float] = {}
    for size in ("20k", "200k"):
        res = run_child("append", str(data_file(size)), str(args.appends))
        raw[f"append_{size}"] = res
        rows.append(
            Row(
                "append first (prepare + write + project)",
                size,
                "ms",
                {k: res["first"]["append_project"] * 1e3 for k in ("median", "min", "max")},
            )
        )
        st = {k: v * 1e3 if k != "n" else v for k, v in res["append_project"].items()}
        append_medians[size] = st["median"]
        rows.append(
            Row(
                f"append user msg (~{res['line_bytes']} B) + project",
                size,
                "ms",
                st,
                target="median < 1 ms",
                verdict=verdict(st["median"] < 1.0),
                extra={"append_only_ms": {k: v * 1e3 for k, v in res["append"].items()}},
            )
        )
    # "Independent of session size": the 200k median may not exceed the 20k one by more than a
    # quarter of the budget (a ratio is meaningless at tens of microseconds).
    delta = append_medians["200k"] - append_medians["20k"]
    rows.append(
        Row(
            "append median, 200k minus 20k",
            "-",
            "ms",
            {"median": delta, "min": delta, "max": delta},
            target="< 0.25 ms (size-indep.)",
            verdict=verdict(delta < 0.25),
            extra={"ratio": append_medians["200k"] / append_medians["20k"]},
        )
    )

    res = run_child("leaf_move", str(data_file("20k")), str(args.moves))
    raw["leaf_move_20k"] = res
    ctx_lo, ctx_hi = PI["20k"].context
    for key, label in (
        ("first_pass", f"leaf move + project, {args.moves} random"),
        ("second_pass", "leaf move + project, same targets again"),
    ):
        st = {k: v * 1e3 if k != "n" else v for k, v in res[key].items()}
        row = Row(
            label,
            "20k",
            "ms",
            st,
            pi=ms_range(ctx_lo, ctx_hi),
            ratio=st["median"] / ((ctx_lo + ctx_hi) / 2 * 1e3),
        )
        if key == "first_pass":
            row.target = "median < 2 ms"
            row.verdict = verdict(st["median"] < 2.0)
            row.extra = {"context_messages": res["context_messages"]}
        rows.append(row)

    print()
    print(
        f"pitui session benchmarks: {runs} runs per whole-process figure, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    for size, info in files.items():
        print(f"  {size}: {info['path']} ({info['bytes'] / 1e6:.1f} MB, {info['entries']:,})")
    print()
    print_table(rows)
    print()
    print(
        "pi figures: pi 1.6.0 / Node 20 on pi-generated files of the same shape "
        "(docs/performance.md); ours/pi uses the middle of pi's range. RSS in MiB."
    )
    print(
        "  leaf context (messages projected at the last entry): "
        + ", ".join(f"{size} {raw[f'inproc_{size}'][0]['messages']}" for size in ("20k", "200k"))
        + "; leaf move: pi rebuilds the context from scratch (its build-context figure)."
    )
    for r in rows:
        if r.extra.get("append_only_ms"):
            a = r.extra["append_only_ms"]
            print(
                f"  {r.file} append without project: median {a['median']:.3f} ms, "
                f"p90 {a['p90']:.3f} ms, max {a['max']:.3f} ms"
            )
        if r.extra.get("context_messages") and isinstance(r.extra["context_messages"], dict):
            c = r.extra["context_messages"]
            print(f"  leaf-move contexts: median {c['median']:.0f} messages, max {c['max']:.0f}")

    others: dict[str, Any] = {}
    if not args.session_only:
        others = run_other_benchmarks(args.quick)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 1),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "runs": runs,
        "files": files,
        "pi_reference": {k: asdict(v) for k, v in PI.items()},
        "rows": [asdict(r) for r in rows],
        "raw": raw,
        "other_benchmarks": others,
    }
    tmp = RESULTS_DIR / "latest.json.tmp"
    tmp.write_text(json.dumps(out, indent=2) + "\n")
    tmp.replace(RESULTS_DIR / "latest.json")
    print(f"\nwrote {RESULTS_DIR / 'latest.json'}")
    verdicts = [r.verdict for r in rows if r.verdict]
    print(f"targets: {verdicts.count('PASS')} PASS, {verdicts.count('FAIL')} FAIL")
    if args.all:
        print("\n== TUI benchmarks (tui_bench.py) ==", flush=True)
        return int(tui_bench.main([*rest, *(["--quick"] if args.quick else [])]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
