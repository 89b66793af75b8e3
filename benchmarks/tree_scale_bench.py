"""Tree browser at scale, in process (headless): open, key, close, search, memory, appends.

    python benchmarks/tree_scale_bench.py [--sizes 20k,200k,1m] [--runs N] [--json]

Each size runs in its own child process (so memory figures are that process's own). Times are
taken inside the app, from the action to the end of the frame that shows its result (every frame
the app writes is time-stamped; ``pilot.press`` itself costs ~60 ms and is not counted):

* open: ``push_screen`` → the first frame with the tree's rows (a large session is laid out in a
  worker: the rows come a few frames later); *cold* is the first open of the process;
* key: a Down/Up key event reaching the tree → the next frame;
* close: ``pop_screen`` → the next frame of the chat;
* search results: the first key of a query typed in one burst (``/zqlatest``, one entry
  matches, planted in a copy of the session) → the frame showing the one result;
* search key echo: a common query (``tool read``) typed at 8 keys/s, each key → the frame showing
  it in the status line (the search of the previous keys may still be running);
* longest stall: the longest the event loop did not run (a 5 ms ticker) while searching, and
  the longest stretch of the UI thread's own CPU work between two ticks (the first also counts
  time the machine gave to other processes or threads);
* clear: Esc → the frame with every row back;
* tree RSS: resident memory added by the first open (MiB);
* append: one entry appended at the leaf → the tree has taken it in (ms, median), browser open.

Targets (issues 11 and 16): open / key / close at 20k < 50 / 16 / 30 ms (in a real terminal:
these headless figures are a lower bound), search results at 200k < 0.5 s, no stall > 50 ms,
tree open at 1M adds < 100 MiB. The sessions are generated when missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
SIZES = {"2k": 2_000, "20k": 20_000, "200k": 200_000, "1m": 1_000_000}
TERMINAL = (120, 40)
MARKER = "zqlatest"


def session_file(size: str) -> Path:
    path = DATA / f"session-{size}-s1.jsonl"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} (this takes a while for 1m) ...", file=sys.stderr, flush=True)
        subprocess.run(
            [
                sys.executable,
                str(HERE / "generate.py"),
                "--entries",
                str(SIZES[size]),
                "--seed",
                "1",
                str(path),
            ],
            check=True,
        )
    return path


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def note(text: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def first_after(frames: list[float], moment: float) -> float | None:
    """The first frame written at or after ``moment``."""
    return next((t for t in frames if t >= moment), None)


def median_ms(values: list[float]) -> float | None:
    return round(statistics.median(values) * 1000, 1) if values else None


async def measure(path: Path, runs: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE.parent))
    from textual.app import App

    from pitui.config.settings import Settings
    from pitui.session import SessionStore
    from pitui.ui.app import PituiApp
    from pitui.ui.screens import tree_browser as browser_module
    from pitui.ui.widgets.session_tree import SessionTree

    frames: list[float] = []
    watch: list[Any] = [None]  # a condition; the first frame written while it holds is kept
    hits: list[float] = []
    original = App._display

    def display(self: Any, screen: Any, renderable: Any) -> None:
        original(self, screen, renderable)
        if renderable is not None:
            now = time.perf_counter()
            frames.append(now)
            if watch[0] is not None and not hits and watch[0]():
                hits.append(now)

    App._display = display  # type: ignore[method-assign]

    store = SessionStore.open(path)
    store.append_message({"role": "user", "content": f"find me: {MARKER}"})
    app = PituiApp(
        store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), clock=lambda: 0.0
    )
    out: dict[str, Any] = {}

    def browser() -> Any:
        factory = getattr(browser_module, "tree_browser", None)
        return factory(app) if factory else browser_module.TreeBrowserScreen()

    async def settle(pilot: Any, seconds: float = 0.3) -> None:
        await pilot.pause(seconds)

    async def until(pilot: Any, check: Any, what: str, timeout: float = 600) -> None:
        deadline = time.perf_counter() + timeout
        while not check():
            if time.perf_counter() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            await pilot.pause(0.002)

    async def frame_from(pilot: Any, moment: float) -> float:
        """When the first frame at or after ``moment`` was written."""
        await until(pilot, lambda: first_after(frames, moment) is not None, "a frame")
        found = first_after(frames, moment)
        assert found is not None
        return found

    def busy(tree: Any) -> bool:
        return bool(getattr(tree, "busy", False))

    async def shown(pilot: Any, check: Any, what: str) -> float:
        """When the first frame showing ``check()`` true was written (watch set beforehand)."""
        await until(pilot, lambda: bool(hits), what)
        watch[0] = None
        return hits[0]

    def expect(check: Any) -> None:
        hits.clear()
        watch[0] = check

    async def open_browser(pilot: Any) -> tuple[Any, Any, float]:
        """Push the browser; its tree, and push → the first frame with its rows."""
        screen = browser()
        frames.clear()
        started = time.perf_counter()
        app.push_screen(screen)
        await until(pilot, lambda: app.screen is screen and bool(screen.query(SessionTree)), "push")
        tree = screen.query_one(SessionTree)
        expect(lambda: tree.row_count > 0 and not busy(tree))
        done = await shown(pilot, None, "the rows")
        return screen, tree, done - started

    async with app.run_test(size=TERMINAL) as pilot:
        await settle(pilot, 1.0)
        opens, closes, keys = [], [], []
        growth = 0.0
        for run in range(runs):
            note(f"open {run + 1}/{runs}")
            before = rss_mib()
            screen, tree, seconds = await open_browser(pilot)
            opens.append(seconds)
            await settle(pilot)
            if run == 0:
                growth = rss_mib() - before
                out["rows"] = tree.row_count
            for i in range(10):
                tree.last_key_at = None
                await pilot.press("down" if i % 2 == 0 else "up")
                pressed = tree.last_key_at
                if pressed is not None:
                    keys.append(await frame_from(pilot, pressed) - pressed)
                await settle(pilot, 0.08)
            started = time.perf_counter()
            app.pop_screen()
            await until(pilot, lambda screen=screen: app.screen is not screen, "the pop")
            closes.append(await frame_from(pilot, started) - started)
            await settle(pilot)
        out["open_cold_ms"] = round(opens[0] * 1000, 1)
        out["open_ms"] = median_ms(opens[1:] or opens)
        out["key_ms"] = median_ms(keys)
        out["close_ms"] = median_ms(closes)
        out["tree_rss_mib"] = round(growth, 1)

        # ------------------------------------------------------------- search
        note("search")
        screen, tree, _ = await open_browser(pilot)
        await settle(pilot)
        total = tree.row_count
        status = screen.query_one("#tree-status")
        stalls: list[float] = []
        probing = True

        busy_stalls: list[float] = []

        async def ticker() -> None:
            last, last_cpu = time.perf_counter(), time.thread_time()
            while probing:
                await asyncio.sleep(0.005)
                now, cpu = time.perf_counter(), time.thread_time()
                stalls.append(now - last - 0.005)
                busy_stalls.append(cpu - last_cpu)  # the UI thread's own work in that gap
                last, last_cpu = now, cpu

        probe = asyncio.ensure_future(ticker())
        await pilot.press("slash")
        expect(lambda: tree.row_count == 1 and not busy(tree))
        started = time.perf_counter()
        await pilot.press(*MARKER)
        done = await shown(pilot, None, "the results")
        out["search_results_ms"] = round((done - started) * 1000, 1)
        await settle(pilot)
        note("clear")
        expect(lambda: tree.row_count == total and not busy(tree))
        started = time.perf_counter()
        await pilot.press("escape")
        done = await shown(pilot, None, "all rows")
        out["search_clear_ms"] = round((done - started) * 1000, 1)
        await settle(pilot)
        note("typing")
        await pilot.press("slash")
        echoes = []
        phrase = "tool read"
        for i, char in enumerate(phrase):
            tree.last_key_at = None
            want = f"/{phrase[: i + 1]}▏"
            expect(lambda want=want: want in str(status.render()))
            sent = time.perf_counter()
            await pilot.press("space" if char == " " else char)
            pressed = tree.last_key_at or sent
            echoes.append(await shown(pilot, None, "the echo") - pressed)
            pause = sent + 0.125 - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)
        await until(pilot, lambda: not busy(tree), "the search")
        probing = False
        await probe
        out["search_key_echo_ms"] = median_ms(echoes)
        out["search_key_echo_max_ms"] = round(max(echoes) * 1000, 1)
        out["longest_stall_ms"] = round(max(stalls) * 1000, 1) if stalls else None
        out["longest_ui_work_ms"] = round(max(busy_stalls) * 1000, 1) if busy_stalls else None
        await pilot.press("escape")
        await until(pilot, lambda: tree.row_count == total and not busy(tree), "all rows")
        await settle(pilot)

        # ------------------------------------------------------------- appends
        note("appends")
        appends: list[float] = []
        original_appended = SessionTree.entry_appended

        def timed(self: Any, entry_id: str) -> None:
            t0 = time.perf_counter()
            original_appended(self, entry_id)
            appends.append(time.perf_counter() - t0)

        SessionTree.entry_appended = timed  # type: ignore[method-assign]
        for i in range(40):
            store.append_message({"role": "user", "content": f"more {i}"})
            await pilot.pause(0.02)
        SessionTree.entry_appended = original_appended  # type: ignore[method-assign]
        out["append_ms"] = median_ms(appends)
        out["append_max_ms"] = round(max(appends) * 1000, 2) if appends else None
        app.pop_screen()
        await settle(pilot)
    return out


def child(size: str, runs: int) -> None:
    source = session_file(size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / source.name
        shutil.copy(source, path)
        result = asyncio.run(measure(path, runs))
    print(json.dumps(result))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20k,200k")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.runs)
        return 0
    results: dict[str, Any] = {}
    for size in args.sizes.split(","):
        session_file(size)
        proc = subprocess.run(
            [sys.executable, __file__, "--child", size, "--runs", str(args.runs)],
            stdout=subprocess.PIPE,
            text=True,
            timeout=3600,
        )
        if proc.returncode != 0:
            results[size] = {"error": proc.returncode}
            continue
        results[size] = json.loads(proc.stdout.strip().splitlines()[-1])
        if not args.json:
            print(size, json.dumps(results[size]), flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
