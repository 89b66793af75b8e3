"""SGR colour sequences in tool output turned into styled runs for the HTML export.

Every other escape sequence and control character is removed first (:func:`keep_sgr_only`);
what is left is split into ``(text, style)`` runs. Styles are small dicts of CSS values that
this module computes from numbers (never text from the session): ``fg``/``bg`` as ``#rrggbb``,
and flags ``b`` (bold), ``d`` (dim), ``i`` (italic), ``u`` (underline), ``s`` (strike).
"""

from __future__ import annotations

import re
from typing import Any

from pitui.text import keep_sgr_only

_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
# xterm's default 16 colours.
PALETTE = [
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
]  # fmt: skip
_CUBE = [0, 95, 135, 175, 215, 255]


def _hex(r: int, g: int, b: int) -> str:
    return f"#{r & 255:02x}{g & 255:02x}{b & 255:02x}"


def color_256(n: int) -> str:
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        return _hex(_CUBE[n // 36], _CUBE[(n // 6) % 6], _CUBE[n % 6])
    level = 8 + (n - 232) * 10
    return _hex(level, level, level)


def _extended(params: list[int], i: int) -> tuple[str | None, int]:
    """A 38/48 colour starting at ``params[i]`` (5;n or 2;r;g;b); returns (colour, next index)."""
    if i + 1 < len(params) and params[i + 1] == 5 and i + 2 < len(params):
        n = params[i + 2]
        return (color_256(n) if 0 <= n < 256 else None), i + 3
    if i + 1 < len(params) and params[i + 1] == 2 and i + 4 < len(params):
        r, g, b = params[i + 2 : i + 5]
        if all(0 <= v < 256 for v in (r, g, b)):
            return _hex(r, g, b), i + 5
        return None, i + 5
    return None, len(params)


class _State:
    def __init__(self) -> None:
        self.fg: str | None = None
        self.bg: str | None = None
        self.flags: set[str] = set()
        self.inverse = False

    def apply(self, raw: str) -> None:
        params = [int(p) if p.isdigit() and len(p) < 6 else 0 for p in re.split("[;:]", raw)]
        i = 0
        while i < len(params):
            p = params[i]
            if p == 0:
                self.__init__()  # type: ignore[misc]
            elif p == 1:
                self.flags.add("b")
            elif p == 2:
                self.flags.add("d")
            elif p == 3:
                self.flags.add("i")
            elif p == 4:
                self.flags.add("u")
            elif p == 7:
                self.inverse = True
            elif p == 9:
                self.flags.add("s")
            elif p == 22:
                self.flags -= {"b", "d"}
            elif p == 23:
                self.flags.discard("i")
            elif p == 24:
                self.flags.discard("u")
            elif p == 27:
                self.inverse = False
            elif p == 29:
                self.flags.discard("s")
            elif 30 <= p <= 37:
                self.fg = PALETTE[p - 30]
            elif 90 <= p <= 97:
                self.fg = PALETTE[p - 90 + 8]
            elif 40 <= p <= 47:
                self.bg = PALETTE[p - 40]
            elif 100 <= p <= 107:
                self.bg = PALETTE[p - 100 + 8]
            elif p == 39:
                self.fg = None
            elif p == 49:
                self.bg = None
            elif p in (38, 48):
                colour, i = _extended(params, i)
                if colour is not None:
                    if p == 38:
                        self.fg = colour
                    else:
                        self.bg = colour
                continue
            i += 1

    def style(self) -> dict[str, Any] | None:
        fg, bg = (self.bg, self.fg) if self.inverse else (self.fg, self.bg)
        if self.inverse:
            fg = fg or "#ffffff"
            bg = bg or "#1e1e1e"
        out: dict[str, Any] = {}
        if fg:
            out["fg"] = fg
        if bg:
            out["bg"] = bg
        for flag in sorted(self.flags):
            out[flag] = 1
        return out or None


def has_sgr(text: str) -> bool:
    return "\x1b[" in text


def sgr_runs(text: str) -> list[tuple[str, dict[str, Any] | None]]:
    """``text`` as (plain text, style or None) runs; no escape sequence survives."""
    cleaned = keep_sgr_only(text)
    runs: list[tuple[str, dict[str, Any] | None]] = []
    state = _State()
    pos = 0
    for match in _SGR.finditer(cleaned):
        if match.start() > pos:
            runs.append((cleaned[pos : match.start()], state.style()))
        state.apply(match.group(1))
        pos = match.end()
    if pos < len(cleaned):
        runs.append((cleaned[pos:], state.style()))
    merged: list[tuple[str, dict[str, Any] | None]] = []
    for run in runs:
        if merged and merged[-1][1] == run[1]:
            merged[-1] = (merged[-1][0] + run[0], run[1])
        else:
            merged.append(run)
    return merged
