"""Tree browser benchmark: first frame and key → repaint on a 20k-entry session, headless.

    python benchmarks/tree_browser_bench.py [--runs N] [--keys N] [FILE]

Measured inside the app (not with Pilot timings):

* first frame: from ``push_screen(TreeBrowserScreen())`` to the end of the session tree's first
  paint of its lines (``SessionTree.render_lines``). The first run is cold (entries parsed for the
  first time); the median is over all runs.
* key → repaint: from the key event reaching the tree (``SessionTree.last_key_at``) to the end
  of the tree's next paint, over down/up/right/left presses from the middle of the tree.

Targets (the issue): first frame < 300 ms, key → repaint < 50 ms (medians).
The session is generated when missing (``generate.py --entries 20000 --seed 1``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_FILE = HERE / ".data" / "session-20k-s1.jsonl"
FIRST_FRAME_TARGET = 0.300
KEY_TARGET = 0.050
SIZE = (120, 36)

sys.path.insert(0, str(ROOT))

from pitui.config.settings import Settings  # noqa: E402
from pitui.session import SessionStore  # noqa: E402
from pitui.ui.app import PituiApp  # noqa: E402
from pitui.ui.screens.tree_browser import TreeBrowserScreen  # noqa: E402
from pitui.ui.widgets.session_tree import SessionTree  # noqa: E402

RENDERS: list[tuple[SessionTree, float]] = []
"""(tree, perf_counter()) at the end of every paint of a SessionTree's lines."""


def _install_render_probe() -> None:
    original = SessionTree.render_lines

    def probed(self: SessionTree, crop: Any) -> Any:
        strips = original(self, crop)
        RENDERS.append((self, time.perf_counter()))
        return strips

    SessionTree.render_lines = probed  # type: ignore[method-assign]


def ensure_session(path: Path) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"generating {path} ...", flush=True)
    subprocess.run(
        [sys.executable, str(HERE / "generate.py"), "--entries", "20000", "--seed", "1", str(path)],
        check=True,
    )


async def wait_until(pilot: Any, check: Any, timeout: float = 10.0) -> bool:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            return False
        await pilot.pause(0.005)
    return True


def fmt(values: list[float]) -> str:
    if not values:
        return "no samples"
    ms = [v * 1000 for v in values]
    return (
        f"median {statistics.median(ms):7.1f} ms   min {min(ms):7.1f}   max {max(ms):7.1f}"
        f"   (n={len(ms)})"
    )


def verdict(values: list[float], target: float) -> str:
    if not values:
        return "FAIL (no samples)"
    return "PASS" if statistics.median(values) < target else "FAIL"


async def measure(path: Path, runs: int, keys: int) -> dict[str, Any]:
    store = SessionStore.open(path, read_only=True)
    app = PituiApp(
        store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), clock=lambda: 0.0
    )
    first_frames: list[float] = []
    builds: list[float] = []
    latencies: list[float] = []
    no_repaint = 0
    rows = 0
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)  # the main screen settles (chat rendered)
        for _ in range(runs):
            RENDERS.clear()
            screen = TreeBrowserScreen()
            started = time.perf_counter()
            app.push_screen(screen)

            def painted(screen: TreeBrowserScreen = screen) -> list[float]:
                return [t for tree, t in RENDERS if tree.screen is screen]

            if not await wait_until(pilot, lambda: bool(painted())):
                raise RuntimeError("the tree never painted")
            first_frames.append(painted()[0] - started)
            tree = screen.query_one(SessionTree)
            builds.append(tree.build_seconds)
            rows = tree.row_count
            await pilot.pause(0.2)
            app.pop_screen()
            await pilot.pause(0.2)
        # Key → repaint, from the middle of the tree.
        screen = TreeBrowserScreen()
        app.push_screen(screen)
        await wait_until(pilot, lambda: bool(screen.query(SessionTree)))
        tree = screen.query_one(SessionTree)
        await wait_until(pilot, lambda: tree.row_count > 0)
        middle = tree.visible_ids()[tree.row_count // 2]
        tree.move_to(middle)
        await pilot.pause(0.3)
        sequence = ["down", "up", "right", "left"]
        for i in range(keys):
            key = sequence[i % len(sequence)]
            RENDERS.clear()
            tree.last_key_at = None
            await pilot.press(key)
            pressed = tree.last_key_at
            if pressed is None:
                raise RuntimeError(f"the key {key!r} did not reach the tree")

            def repainted(pressed: float = pressed) -> list[float]:
                return [t for painter, t in RENDERS if painter is tree and t > pressed]

            if await wait_until(pilot, lambda: bool(repainted()), timeout=1.0):
                latencies.append(min(repainted()) - pressed)
            else:
                no_repaint += 1  # nothing to change (e.g. Right at a branch end)
            await pilot.pause(0.08)  # the details pane's debounce fires between keys
    store.close()
    return {
        "rows": rows,
        "first_frames": first_frames,
        "builds": builds,
        "latencies": latencies,
        "no_repaint": no_repaint,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--runs", type=int, default=7, help="first-frame runs (default 7)")
    parser.add_argument("--keys", type=int, default=52, help="key presses (default 52)")
    args = parser.parse_args(argv)
    if args.file == DEFAULT_FILE:
        ensure_session(args.file)
    _install_render_probe()
    result = asyncio.run(measure(args.file, args.runs, args.keys))
    first, builds, keys = result["first_frames"], result["builds"], result["latencies"]
    print(f"tree browser on {args.file.name}: {result['rows']} rows shown, terminal {SIZE}")
    print(f"first frame (push → tree painted)  {fmt(first)}   cold {first[0] * 1000:.1f} ms")
    print(f"  of which flatten + layout        {fmt(builds)}")
    print(
        f"  target < {FIRST_FRAME_TARGET * 1000:.0f} ms: {verdict(first, FIRST_FRAME_TARGET)}"
        f" (median); cold run {'PASS' if first[0] < FIRST_FRAME_TARGET else 'FAIL'}"
    )
    print(f"key → repaint (down/up/right/left) {fmt(keys)}")
    if result["no_repaint"]:
        print(f"  ({result['no_repaint']} presses changed nothing and were not counted)")
    print(f"  target < {KEY_TARGET * 1000:.0f} ms: {verdict(keys, KEY_TARGET)} (median)")
    ok = verdict(first, FIRST_FRAME_TARGET) == "PASS" and verdict(keys, KEY_TARGET) == "PASS"
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
