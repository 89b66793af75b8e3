"""Hand-written SVG charts of the TUI benchmark curves (no plotting library).

    python benchmarks/tui_charts.py [benchmarks/results/tui-latest.json]

One chart per curve, pitui beside pi: session size -> time or memory (log-log, so a linear
cost is a straight line and a regression shows as a bend), reply length -> time on screen
(with the raw stream), and the "Show N earlier entries" clicks. Files:
``benchmarks/results/tui-*.svg``.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from html import escape
from pathlib import Path
from typing import Any

W, H = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 40, 50
COLORS = {"pitui": "#d9480f", "pi": "#1971c2", "raw": "#5c940d", "target": "#868e96"}
SIZE_X = {"2k": 2_000, "20k": 20_000, "200k": 200_000, "1m": 1_000_000}

SIZE_CHARTS = [  # file, measures (label -> measure), unit, title
    ("tui-first-frame.svg", {"": "first_frame"}, "ms", "First frame with the latest prompt"),
    ("tui-tool-round.svg", {"": "tool_round"}, "ms", "Per tool round: reply done -> next request"),
    (
        "tui-tree.svg",
        {"open": "tree_open", "key": "tree_key", "close": "tree_close"},
        "ms",
        "Tree browser: open / key / close",
    ),
    (
        "tui-tree-search.svg",
        {"results": "search_results", "slowest key": "search_key_max", "clear": "search_clear"},
        "ms",
        "Tree search",
    ),
    (
        "tui-rss.svg",
        {"first frame": "rss_first_frame", "tree open adds": "tree_rss_growth"},
        "MiB",
        "Memory: RSS at the first frame, RSS added by opening the tree",
    ),
]


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _scale_value(v: float, unit: str) -> float:
    return v * 1e3 if unit == "ms" else v


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        out = []
        e = math.floor(math.log10(lo))
        while 10**e <= hi * 1.0001:
            for m in (1, 2, 5):
                t = m * 10**e
                if lo / 1.0001 <= t <= hi * 1.0001:
                    out.append(t)
            e += 1
        return out or [lo, hi]
    step = 10 ** math.floor(math.log10(max(hi - lo, 1e-9)))
    for m in (1, 2, 5, 10):
        if (hi - lo) / (step * m) <= 6:
            step *= m
            break
    t = math.floor(lo / step) * step
    out = []
    while t <= hi + step * 0.001:
        if t >= lo - step * 0.001:
            out.append(t)
        t += step
    return out


def _label(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def line_chart(
    title: str,
    series: dict[str, list[tuple[float, float]]],
    x_label: str,
    y_label: str,
    x_log: bool = True,
    x_names: dict[float, str] | None = None,
    hlines: dict[str, float] | None = None,
) -> str:
    points = [p for pts in series.values() for p in pts]
    hv = list((hlines or {}).values())
    if not points:
        return ""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points if p[1] > 0] + [v for v in hv if v > 0]
    x_lo, x_hi = min(xs), max(xs)
    if x_lo == x_hi:
        x_lo, x_hi = (x_lo / 2, x_hi * 2) if x_log else (x_lo - 1, x_hi + 1)
    y_lo, y_hi = (min(ys), max(ys)) if ys else (1.0, 10.0)
    y_log = y_hi / max(y_lo, 1e-9) > 20
    if y_log:
        y_lo, y_hi = 10 ** math.floor(math.log10(y_lo)), 10 ** math.ceil(math.log10(y_hi))
    else:
        y_lo, y_hi = 0.0, y_hi * 1.1
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: float) -> float:
        if x_log:
            return LEFT + pw * (math.log10(x) - math.log10(x_lo)) / (
                math.log10(x_hi) - math.log10(x_lo)
            )
        return LEFT + pw * (x - x_lo) / (x_hi - x_lo)

    def py(y: float) -> float:
        if y_log:
            y = max(y, y_lo)
            return (
                TOP
                + ph
                - ph * (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo))
            )
        return TOP + ph - ph * (y - y_lo) / (y_hi - y_lo)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for t in _ticks(y_lo, y_hi, y_log):
        y = py(t)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(t)}</text>')
    # Only the sizes the run measured: a size with no point (1M in a quick run) would be
    # drawn outside the plot, under the legend.
    x_ticks = (
        sorted(t for t in x_names if x_lo <= t <= x_hi) if x_names else _ticks(x_lo, x_hi, x_log)
    )
    for t in x_ticks:
        x = px(t)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="#eee"/>')
        name = (x_names or {}).get(t, _label(t))
        out.append(
            f'<text x="{x:.1f}" y="{TOP + ph + 16}" text-anchor="middle">{escape(name)}</text>'
        )
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    out.append(
        f'<text x="{LEFT + pw / 2}" y="{H - 12}" text-anchor="middle">{escape(x_label)}</text>'
    )
    out.append(
        f'<text x="16" y="{TOP + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + ph / 2})">{escape(y_label)}'
        f"{' (log)' if y_log else ''}</text>"
    )
    legend_y = TOP + 8
    for name, value in (hlines or {}).items():
        y = py(value)
        out.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" '
            f'stroke="{COLORS["target"]}" stroke-dasharray="4 3"/>'
        )
        out.append(
            f'<text x="{LEFT + pw + 6}" y="{y + 4:.1f}" fill="{COLORS["target"]}">'
            f"{escape(name)}</text>"
        )
    for i, (name, pts) in enumerate(series.items()):
        if not pts:
            continue
        agent = name.split(" ")[0]
        color = COLORS.get(agent, "#495057")
        dash = ["", ' stroke-dasharray="6 3"', ' stroke-dasharray="2 3"'][
            min(2, sum(1 for n in list(series)[:i] if n.split(" ")[0] == agent))
        ]
        pts = sorted(pts)
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>'
        )
        for x, y in pts:
            out.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}">'
                f"<title>{escape(name)}: {y:.1f}</title></circle>"
            )
        out.append(
            f'<line x1="{W - RIGHT + 12}" y1="{legend_y}" x2="{W - RIGHT + 32}" '
            f'y2="{legend_y}" stroke="{color}" stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{W - RIGHT + 36}" y="{legend_y + 4}">{escape(name)}</text>')
        legend_y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_charts(data: dict[str, Any], folder: Path) -> list[Path]:
    samples = data.get("samples", {})
    written: list[Path] = []

    def save(name: str, svg: str) -> None:
        if svg:
            path = folder / name
            path.write_text(svg)
            written.append(path)

    sizes = {k: v for k, v in SIZE_X.items()}
    for name, measures, unit, title in SIZE_CHARTS:
        series: dict[str, list[tuple[float, float]]] = {}
        for label, measure in measures.items():
            for agent in ("pitui", "pi"):
                pts = []
                for size, x in sizes.items():
                    m = _median(samples.get(measure, {}).get(size, {}).get(agent, []))
                    if m is not None:
                        pts.append((float(x), _scale_value(m, unit)))
                if pts:
                    series[f"{agent} {label}".strip()] = pts
        save(
            name,
            line_chart(
                title,
                series,
                "session entries",
                unit,
                x_names={float(v): k for k, v in sizes.items()},
            ),
        )
    # reply length -> first..last token on screen, with the raw stream
    series = {}
    for agent in ("pitui", "pi", "raw"):
        pts = []
        for key, values in samples.get(
            "raw_stream" if agent == "raw" else "stream_total", {}
        ).items():
            m = _median(values.get(agent, []))
            if m is not None:
                pts.append((float(key.rstrip("k")) * 1000, m * 1e3))
        if pts:
            series[agent if agent != "raw" else "raw stream"] = pts
    save(
        "tui-stream.svg",
        line_chart(
            "Max-speed reply: first -> last token on screen",
            series,
            "reply tokens",
            "ms",
            x_names={5000.0: "5k", 20000.0: "20k", 40000.0: "40k"},
        ),
    )
    # "Show N earlier entries": click number -> cost and RSS
    for key, per_agent in samples.get("earlier_click", {}).items():
        clicks = per_agent.get("pitui", [])
        if clicks:
            n = 6
            runs = [clicks[i : i + n] for i in range(0, len(clicks), n)]
            per_click = [statistics.median(r[i] for r in runs if len(r) > i) for i in range(n)]
            series = {"pitui click": [(float(i + 1), v * 1e3) for i, v in enumerate(per_click)]}
            save(
                f"tui-earlier-{key}.svg",
                line_chart(
                    f"'Show N earlier entries' at {key}: cost per click",
                    series,
                    "click",
                    "ms",
                    x_log=False,
                    x_names={float(i + 1): str(i + 1) for i in range(n)},
                ),
            )
    # key echo during the 32 KB stream: the distribution (sorted), pitui vs pi
    echo = samples.get("key_echo_stream", {}).get("-", {})
    series = {}
    for agent in ("pitui", "pi"):
        values = sorted(echo.get(agent, []))
        if values:
            series[agent] = [(100.0 * (i + 1) / len(values), v * 1e3) for i, v in enumerate(values)]
    save(
        "tui-key-echo.svg",
        line_chart(
            "Key echo during a 32 KB reply at 500 tokens/s (sorted samples)",
            series,
            "percentile",
            "ms",
            x_log=False,
            hlines={"30 ms": 30.0, "100 ms": 100.0},
        ),
    )
    return written


def main() -> int:
    path = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else (Path(__file__).resolve().parent / "results" / "tui-latest.json")
    )
    data = json.loads(path.read_text())
    for p in write_charts(data, path.parent):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
