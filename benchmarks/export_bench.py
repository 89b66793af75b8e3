"""HTML export benchmark on a 20k-entry session: export time, file size, and the page in
headless Chromium (open until the tree and the leaf's conversation are shown, clicking a node,
searching, changing the filter), all timed inside the page with ``performance.now()``.

    python benchmarks/export_bench.py [--runs N] [FILE]

"Open" is from navigation start to the end of the first render (``document.body.dataset.ready``,
set by the page): reading the file, unpacking and parsing the data, the tree's first rows and
the leaf's conversation. The session is generated when missing (``generate.py --entries 20000
--seed 1``). Chromium comes from Debian (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_FILE = HERE / ".data" / "session-20k-s1.jsonl"
OPEN_TARGET = 1.0  # seconds: a 20k-entry page must be usable within a second

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.chromium import Chromium, find_chromium  # noqa: E402

from pitui.export import export_session  # noqa: E402
from pitui.session import SessionStore  # noqa: E402

CLICK = """(() => { const rows = document.querySelectorAll('#tree .row');
  const t0 = performance.now(); rows[Math.min(rows.length - 1, %d)].click();
  return performance.now() - t0; })()"""
SEARCH = """(() => { const s = document.getElementById('search'); const t0 = performance.now();
  s.value = %s; s.dispatchEvent(new Event('input')); const ms = performance.now() - t0;
  s.value = ''; s.dispatchEvent(new Event('input')); return ms; })()"""
FILTER = """(() => { const f = document.getElementById('filter'); const t0 = performance.now();
  f.value = 'all'; f.dispatchEvent(new Event('change')); const ms = performance.now() - t0;
  f.value = 'default'; f.dispatchEvent(new Event('change')); return ms; })()"""


def ensure(path: Path) -> None:
    if not path.exists():
        print(f"generating {path} ...", flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--entries", "20000", "--seed", "1",
             str(path)],
            check=True,
        )  # fmt: skip


def fmt(values: list[float], unit: str = "ms", scale: float = 1.0) -> str:
    v = [x * scale for x in values]
    return f"median {statistics.median(v):.0f} {unit} (min {min(v):.0f}, max {max(v):.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    browser = find_chromium()
    if browser is None:
        print("chromium not installed (apt-get install chromium)")
        return 1
    ensure(args.file)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "export.html"
        exports = []
        for _ in range(max(1, args.runs // 2)):
            t0 = time.perf_counter()
            with SessionStore.open(args.file, read_only=True) as store:
                entries = len(store)
                size = export_session(store, target, "html")
            exports.append(time.perf_counter() - t0)
        opens, clicks, searches, filters, errors = [], [], [], [], []
        for run in range(args.runs):
            with Chromium(browser, Path(tmp) / f"profile-{run}", 1280, 800) as chrome:
                opens.append(float(chrome.open(target.as_uri(), timeout=120)))
                for k in (5, 15, 25):
                    clicks.append(float(chrome.evaluate(CLICK % k)))
                searches.append(float(chrome.evaluate(SEARCH % json.dumps("journal retry"))))
                filters.append(float(chrome.evaluate(FILTER)))
                chrome.pump(0.2)
                errors += chrome.script_errors()
                requests = chrome.requests()
    result: dict[str, Any] = {
        "entries": entries,
        "session_bytes": args.file.stat().st_size,
        "export_bytes": size,
        "export_s": statistics.median(exports),
        "open_ms": statistics.median(opens),
        "click_ms": statistics.median(clicks),
        "search_ms": statistics.median(searches),
        "filter_ms": statistics.median(filters),
        "script_errors": len(errors),
        "requests": len(requests),
        "pass": statistics.median(opens) / 1000 < OPEN_TARGET and not errors,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"HTML export of {args.file.name}: {entries:,} entries, session "
        f"{result['session_bytes'] / 1e6:.1f} MB → page {size / 1e6:.1f} MB"
    )
    print(f"export (open session + write page)  {fmt(exports, 's')}")
    print(f"Chromium: open to tree + leaf shown {fmt(opens)}; target < {OPEN_TARGET:.0f} s: "
          f"{'PASS' if result['pass'] else 'FAIL'}")  # fmt: skip
    print(f"click a node → its conversation     {fmt(clicks)}")
    print(f"search (two words) over the tree    {fmt(searches)}")
    print(f"filter change (default → all)       {fmt(filters)}")
    print(f"script errors {len(errors)}, requests {len(requests)} (the file itself)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
