"""Issue 28's before/after chart: pitui before the native wire APIs (litellm on every request),
pitui after, and pi 1.6, from one set of benchmark runs.

    python benchmarks/before_after_chart.py

Reads ``results/print-before.json`` and ``results/print-latest.json`` (``print_bench.py``,
before with ``PITUI_BENCH_ROOT`` at a checkout of the older commit) and
``results/tui-issue28-before.json`` and ``results/tui-issue28.json`` (``tui_bench.py --groups
first,early,throughput``, the same way), and writes ``results/issue28-before-after.svg``: one
row per measure, each scaled to its own largest value, with the figures written on the bars.
"""

from __future__ import annotations

import json
import statistics
from html import escape
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OUT = RESULTS / "issue28-before-after.svg"
COLORS = {"before": "#9aa0a6", "after": "#1a73e8", "pi": "#e37400"}
LABELS = {"before": "pitui before (litellm)", "after": "pitui now (native APIs)", "pi": "pi 1.6"}


def _print_rows(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, dict]]:
    def median(data: dict[str, Any], agent: str, measure: str, scale: float) -> float:
        return statistics.median(s[measure] * scale for s in data["samples"][agent])

    rows = []
    for measure, title, unit, scale in (
        ("wall", "pitui -p hi: wall time", "ms", 1e3),
        ("cpu", "pitui -p hi: CPU time", "ms", 1e3),
        ("rss_mib", "pitui -p hi: peak RSS", "MiB", 1.0),
    ):
        rows.append(
            (
                title,
                unit,
                {
                    "before": median(before, "pitui", measure, scale),
                    "after": median(after, "pitui", measure, scale),
                    "pi": median(after, "pi", measure, scale),
                },
            )
        )
    return rows


def _tui_median(data: dict[str, Any], measure: str, key: str, agent: str) -> float | None:
    for row in data.get("rows", []):
        if row.get("measure") == measure and row.get("key") == key:
            value = row.get(agent)
            return float(value) if value is not None else None
    return None


def _tui_rows(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, dict]]:
    rows = []
    for measure, key, title, unit in (
        ("enter_to_request", "-", "TUI: Enter -> the request reaches the model", "ms"),
        ("rss_after_request", "-", "TUI: RSS after one request", "MiB"),
    ):
        values = {
            "before": _tui_median(before, measure, key, "pitui"),
            "after": _tui_median(after, measure, key, "pitui"),
            "pi": _tui_median(after, measure, key, "pi"),
        }
        if all(v is not None for v in values.values()):
            rows.append((title, unit, values))
    return rows


def draw(rows: list[tuple[str, str, dict]], note: str) -> str:
    width, left, bar_h, gap = 900, 330, 16, 6
    row_h = 3 * (bar_h + 2) + gap + 18
    height = 70 + row_h * len(rows) + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        'font-size="13">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        '<text x="20" y="28" font-size="16" font-weight="bold">Issue 28: replies start at '
        "once (medians, lower is better)</text>",
    ]
    x = 20
    for name, label in LABELS.items():
        out.append(f'<rect x="{x}" y="40" width="12" height="12" fill="{COLORS[name]}"/>')
        out.append(f'<text x="{x + 18}" y="51">{escape(label)}</text>')
        x += 230
    y = 70
    for title, unit, values in rows:
        out.append(f'<text x="20" y="{y + 14}" font-weight="bold">{escape(title)}</text>')
        top = max(values.values()) or 1.0
        for i, name in enumerate(("before", "after", "pi")):
            value = values[name]
            by = y + 20 + i * (bar_h + 2)
            w = max(1.0, (width - left - 90) * value / top)
            out.append(
                f'<rect x="{left}" y="{by}" width="{w:.1f}" height="{bar_h}" '
                f'fill="{COLORS[name]}"/>'
            )
            text = f"{value:,.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
            out.append(f'<text x="{left + w + 6:.1f}" y="{by + 12}">{escape(text)}</text>')
            out.append(
                f'<text x="{left - 8}" y="{by + 12}" text-anchor="end" fill="#5f6368">'
                f"{escape(LABELS[name])}</text>"
            )
        y += row_h
    out.append(f'<text x="20" y="{height - 12}" fill="#5f6368">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> None:
    rows: list[tuple[str, str, dict]] = []
    notes = []
    before, after = RESULTS / "print-before.json", RESULTS / "print-latest.json"
    if before.exists() and after.exists():
        b, a = json.loads(before.read_text()), json.loads(after.read_text())
        rows += _print_rows(b, a)
        notes.append(f"print: {a['when']}, {len(a['samples']['pitui'])} runs")
    before, after = RESULTS / "tui-issue28-before.json", RESULTS / "tui-issue28.json"
    if before.exists() and after.exists():
        rows += _tui_rows(json.loads(before.read_text()), json.loads(after.read_text()))
        notes.append("TUI: tmux 120x40, --quick, two runs back to back")
    if not rows:
        raise SystemExit("no results to draw: run print_bench.py and tui_bench.py first")
    OUT.write_text(draw(rows, "; ".join(notes) + "; same machine, same scripted model"))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
