"""Hostile sizes in the TUI: time to first frame and peak RSS of `pitui --session FILE` on three
valid pi v3 sessions that are huge in one place (issue 15 item 10).

    python benchmarks/hostile_sizes.py [--runs N] [--headless] [--no-details] [--no-export]

Files (seeded, ``tests/reliability/corpus.py``, written to ``benchmarks/.data/`` when missing):
a system message of 50,000 sections, an assistant message of 200,000 text blocks, a 10 MB reply;
plus a small session as the baseline of the same run (what start-up alone costs here).

* first frame (default, a real terminal): `python -m pitui --session FILE` inside a private tmux
  server (120x40) under `/usr/bin/time`; the time runs from just before tmux starts it to the
  first capture of the pane that shows the session's last prompt (the chat's first screen),
  polled every 50 ms; peak RSS is `/usr/bin/time`'s maximum resident set of the pitui process
  over the whole run (open, first frame, the rest of the chat window mounted, 2 s more, quit).
  ``--headless`` measures in-process instead (Textual's headless driver in a fresh interpreter,
  first frame = the main screen mounted and refreshed once; RSS = that process's peak).
* details pane (headless, in-process): the tree browser opened on the hostile entry, each tab
  (Entry, Context, Compaction) shown: seconds per tab and the widgets mounted in the pane.
* export: `pitui export FILE -o out.html` (whole process): seconds, peak RSS, output size.

Targets (the issue): < 2 s to the first frame and < 500 MB peak RSS for each of the three.
The machine is noisy (2 shared cores): the baseline row says what start-up alone costs now.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA_DIR = HERE / ".data"
TARGET_S = 2.0
TARGET_MB = 500.0
WIDTH, HEIGHT = 120, 40

sys.path.insert(0, str(ROOT / "tests" / "reliability"))
from corpus import END_PROMPT, HOSTILE_SIZES, chain  # noqa: E402

BASELINE = "baseline_small"


def ensure_files() -> dict[str, Path]:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    makers = {**HOSTILE_SIZES, BASELINE: None}
    for name, make in makers.items():
        path = DATA_DIR / f"hostile-{name}-s1.jsonl"
        if not path.exists():
            data = _baseline() if make is None else make()
            print(f"generating {path.name} ({len(data) / 1e6:.1f} MB) ...", flush=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        out[name] = path
    return out


def _baseline() -> bytes:
    """A small session that ends with the same prompt (start-up alone, for comparison)."""
    import json as _json

    body = chain(20)
    last = {
        "type": "message",
        "id": "u-after",
        "parentId": "e19",
        "timestamp": "2026-01-01T00:01:00.000Z",
        "message": {"role": "user", "content": END_PROMPT, "timestamp": 1},
    }
    return body + _json.dumps(last).encode() + b"\n"


def _env(tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TERM": "xterm-256color",
    }


# ----------------------------------------------------------------------- first frame, tmux


def tmux_run(path: Path) -> dict[str, Any]:
    """One run of `pitui --session COPY` in a private tmux server."""
    with tempfile.TemporaryDirectory(prefix="pitui-hostile-") as name:
        tmp = Path(name)
        copy = tmp / path.name
        shutil.copyfile(path, copy)
        rss_file = tmp / "rss"
        sock = ["tmux", "-S", str(tmp / "tmux"), "-f", os.devnull]
        env = _env(tmp)
        exports = " ".join(
            f"{k}={shlex.quote(v)}"
            for k, v in env.items()
            if k.startswith(("XDG_", "LITELLM_", "TERM", "PYTHONPATH"))
        )
        command = (
            f"cd {shlex.quote(str(tmp))} && env {exports} /usr/bin/time -f %M -o "
            f"{shlex.quote(str(rss_file))} {shlex.quote(sys.executable)} -m pitui --session "
            f"{shlex.quote(str(copy))}"
        )
        subprocess.run([*sock, "new-session", "-d", "-s", "keep", "sleep 100000"], check=True)
        started = time.perf_counter()
        subprocess.run(
            [
                *sock,
                "new-session",
                "-d",
                "-s",
                "bench",
                "-x",
                str(WIDTH),
                "-y",
                str(HEIGHT),
                command,
            ],
            check=True,
        )
        frame = None
        deadline = started + 600
        while time.perf_counter() < deadline:
            shown = subprocess.run(
                [*sock, "capture-pane", "-p", "-t", "bench"], capture_output=True, text=True
            ).stdout
            if END_PROMPT in shown:
                frame = time.perf_counter() - started
                break
            time.sleep(0.05)
        time.sleep(2.0)  # the rest of the chat window mounts just after the first frame
        subprocess.run([*sock, "send-keys", "-t", "bench", "C-q"], capture_output=True)
        for _ in range(600):
            if rss_file.exists() and rss_file.read_text().strip():
                break
            time.sleep(0.1)
        subprocess.run([*sock, "kill-server"], capture_output=True)
        text = rss_file.read_text().strip().splitlines() if rss_file.exists() else []
        rss_mb = int(text[-1]) / 1024 if text and text[-1].isdigit() else float("nan")
        return {"first_frame_s": frame, "rss_mb": rss_mb}


# ------------------------------------------------------------------- first frame, headless

HEADLESS_CHILD = r"""
import json, resource, sys, time
t0 = float(sys.argv[2])
from pathlib import Path
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp

store = SessionStore.open(Path(sys.argv[1]), read_only=True)
app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=Path.cwd())
out = {}

async def first_frame(pilot):
    await pilot.pause()
    out["first_frame_s"] = time.time() - t0
    await pilot.pause(2.0)
    pilot.app.exit()

app.run(headless=True, auto_pilot=first_frame, size=(120, 40))
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def headless_run(path: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pitui-hostile-") as name:
        proc = subprocess.run(
            [sys.executable, "-c", HEADLESS_CHILD, str(path), repr(time.time())],
            capture_output=True,
            text=True,
            env=_env(Path(name)),
            cwd=name,
            timeout=900,
        )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# ----------------------------------------------------------------------- the details pane

DETAILS_CHILD = r"""
import asyncio, json, resource, sys, time
from pathlib import Path
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.screens.tree_browser import TreeBrowserScreen
from pitui.ui.widgets.inspectors import DetailsPane

target = sys.argv[2]
store = SessionStore.open(Path(sys.argv[1]), read_only=True)
app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=Path.cwd())
out = {}

async def run(pilot):
    await pilot.pause()
    t = time.perf_counter()
    app.push_screen(TreeBrowserScreen())
    while not isinstance(app.screen, TreeBrowserScreen):
        await pilot.pause(0.02)
    await pilot.pause()
    out["tree_s"] = time.perf_counter() - t
    pane = app.screen.query_one(DetailsPane)  # what a cursor move onto the entry does
    for tab in ("entry", "context", "compaction"):
        t = time.perf_counter()
        pane.set_tab(tab)
        await pilot.pause()
        pane.show_now(target)
        await pilot.pause()
        out[f"{tab}_s"] = time.perf_counter() - t
        out[f"{tab}_widgets"] = sum(1 for _ in pane.walk_children())
    pilot.app.exit()

app.run(headless=True, auto_pilot=run, size=(120, 40))
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

TARGETS = {"system_sections_50k": "sys", "text_blocks_200k": "blocks", "reply_10mb": "long"}


def details_run(path: Path, entry_id: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pitui-hostile-") as name:
        proc = subprocess.run(
            [sys.executable, "-c", DETAILS_CHILD, str(path), entry_id],
            capture_output=True,
            text=True,
            env=_env(Path(name)),
            cwd=name,
            timeout=900,
        )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def export_run(path: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="pitui-hostile-") as name:
        out = Path(name) / "out.html"
        started = time.perf_counter()
        proc = subprocess.run(
            [
                "/usr/bin/time",
                "-f",
                "%M",
                sys.executable,
                "-m",
                "pitui",
                "export",
                str(path),
                "-o",
                str(out),
            ],
            capture_output=True,
            text=True,
            env=_env(Path(name)),
            cwd=name,
            timeout=900,
        )
        wall = time.perf_counter() - started
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        return {
            "s": wall,
            "rss_mb": int(last) / 1024 if last.isdigit() else float("nan"),
            "mb": out.stat().st_size / 1e6 if out.exists() else 0.0,
            "rc": proc.returncode,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--headless", action="store_true", help="in-process, no terminal")
    parser.add_argument("--no-details", action="store_true", help="skip the details pane")
    parser.add_argument("--no-export", action="store_true", help="skip the HTML export")
    parser.add_argument("--json", action="store_true", help="also print one JSON object")
    parser.add_argument("--only", help="one file (e.g. text_blocks_200k), after the baseline")
    args = parser.parse_args()
    files = ensure_files()
    headless = args.headless or shutil.which("tmux") is None or not Path("/usr/bin/time").exists()
    how = "headless, in-process" if headless else "tmux 120x40, real terminal"
    run = headless_run if headless else tmux_run
    report: dict[str, Any] = {"mode": how, "first_frame": {}, "details": {}, "export": {}}
    print(f"first frame and peak RSS ({how}; {args.runs} runs, median):")
    print(
        f"{'file':<22} {'MB':>6} {'first frame s':>14} {'over start-up s':>16} "
        f"{'peak RSS MB':>12}  verdict"
    )
    failed = 0
    base_frame = 0.0
    names = [n for n in HOSTILE_SIZES if args.only in (None, n)]
    for name in (BASELINE, *names):
        path = files[name]
        runs = [run(path) for _ in range(args.runs)]
        frames = [r["first_frame_s"] for r in runs if r["first_frame_s"] is not None]
        frame = statistics.median(frames) if len(frames) == len(runs) else float("inf")
        rss = max(r["rss_mb"] for r in runs)
        if name == BASELINE:
            base_frame = frame
            verdict = "- (start-up alone)"
        else:
            ok = frame < TARGET_S and rss < TARGET_MB
            verdict = "PASS" if ok else "FAIL"
            if not ok and frame - base_frame < TARGET_S and rss < TARGET_MB:
                verdict += " (PASS over start-up)"
            failed += not ok
        size = path.stat().st_size / 1e6
        over = frame - base_frame if name != BASELINE else 0.0
        print(
            f"{name:<22} {size:>6.1f} {frame:>14.2f} {over:>16.2f} {rss:>12.0f}  {verdict}",
            flush=True,
        )
        report["first_frame"][name] = {"runs": runs, "median_s": frame, "max_rss_mb": rss}
    print(f"targets: first frame < {TARGET_S:.0f} s, peak RSS < {TARGET_MB:.0f} MB")
    if not args.no_details:
        print("\ntree browser and details pane on the hostile entry (headless, one run):")
        print(
            f"{'file':<22} {'tree s':>7} {'entry s':>8} {'context s':>10} {'compact s':>10} "
            f"{'widgets e/c/c':>14} {'RSS MB':>7}"
        )
        for name, entry_id in TARGETS.items():
            if name not in names:
                continue
            d = details_run(files[name], entry_id)
            widgets = f"{d['entry_widgets']}/{d['context_widgets']}/{d['compaction_widgets']}"
            print(
                f"{name:<22} {d['tree_s']:>7.2f} {d['entry_s']:>8.2f} {d['context_s']:>10.2f} "
                f"{d['compaction_s']:>10.2f} {widgets:>14} {d['rss_mb']:>7.0f}",
                flush=True,
            )
            report["details"][name] = d
    if not args.no_export:
        print("\npitui export FILE -o out.html (whole process, one run):")
        for name in names:
            e = export_run(files[name])
            print(
                f"{name:<22} {e['s']:>6.2f} s {e['rss_mb']:>6.0f} MB peak, "
                f"{e['mb']:.1f} MB written, exit {e['rc']}",
                flush=True,
            )
            report["export"][name] = e
    if args.json:
        print(json.dumps(report))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
