"""JSON encoding and decoding of session lines (compact, one object per line, like JS)."""

from __future__ import annotations

import json
from typing import Any

import orjson

from pitui.deepjson import dumps as deep_dumps


def dumps_line(obj: Any) -> bytes:
    """Compact JSON for one line, newline included. Non-ASCII stays UTF-8 (as JSON.stringify).

    Any depth: orjson stops at 255 levels, the fallback does not."""
    try:
        return orjson.dumps(obj) + b"\n"
    except TypeError:
        # Lone surrogates cannot be UTF-8 encoded (JSON.stringify writes them as \\u escapes);
        # orjson also refuses integers past 64 bits and more than 255 levels of nesting.
        return deep_dumps(obj, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON value as JavaScript's ``JSON.parse`` would; ``ValueError`` on bad input.

    The fast path is orjson. It refuses two things pi's files can hold: lone surrogate escapes
    (``"\\ud83d"``, which ``JSON.stringify`` writes) and invalid UTF-8 (Node reads it as
    U+FFFD). Both are accepted by the slower fallback.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8", errors="replace")
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None


def dumps_pretty(obj: Any) -> str:
    """Indented JSON for people, at any depth; falls back to the stdlib for what orjson refuses
    (lone surrogates, integers past 64 bits, more than 255 levels)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return deep_dumps(obj, indent=2, ensure_ascii=True)
