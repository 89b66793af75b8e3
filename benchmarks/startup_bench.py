"""`pitui` start to first frame (no session), in fresh processes; litellm must not be imported.

    python benchmarks/startup_bench.py [--runs N] [--json]

Each run starts a new interpreter that builds the app as `pitui` does (new session in a temp
folder, no model) and runs it headless; the first frame is taken when the main screen has
mounted and the app has processed its first refresh. The time is measured from just before the
process is started to that moment (both sides read the wall clock).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time, tempfile
from pathlib import Path
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp

folder = Path(tempfile.mkdtemp())
store = SessionStore.create(folder / "sessions", str(folder))
app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=folder)

async def first_frame(pilot):
    await pilot.pause()
    print(f"FRAME {time.time()!r} {'litellm' in sys.modules}", flush=True)
    pilot.app.exit()

app.run(headless=True, auto_pilot=first_frame, size=(120, 40))
"""


def measure(runs: int) -> dict[str, object]:
    samples: list[float] = []
    litellm_seen = False
    env = {**os.environ, "XDG_DATA_HOME": tempfile.mkdtemp(), "XDG_CONFIG_HOME": tempfile.mkdtemp()}
    for _ in range(runs):
        started = time.time()
        out = subprocess.run(
            [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120
        ).stdout
        line = next(line for line in out.splitlines() if line.startswith("FRAME "))
        _, stamp, seen = line.split()
        samples.append(float(stamp) - started)
        litellm_seen = litellm_seen or seen == "True"
    return {
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "max_s": max(samples),
        "runs": runs,
        "litellm_imported": litellm_seen,
        "target_s": 0.5,
        "pass": statistics.median(samples) < 0.5 and not litellm_seen,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.runs)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"pitui start to first frame: median {result['median_s']:.3f} s "
            f"(min {result['min_s']:.3f}, max {result['max_s']:.3f}, {args.runs} runs); "
            f"litellm imported: {result['litellm_imported']}; target < 0.5 s: "
            f"{'PASS' if result['pass'] else 'FAIL'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
