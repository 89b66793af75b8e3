"""JSON encoding and decoding of session lines (compact, one object per line, like JS)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps_line(obj: Any) -> bytes:
    """Compact JSON for one line, newline included. Non-ASCII stays UTF-8 (as JSON.stringify)."""
    try:
        return orjson.dumps(obj) + b"\n"
    except TypeError:
        # Lone surrogates cannot be UTF-8 encoded; JSON.stringify writes them as \\u escapes.
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=True).encode("ascii") + b"\n"


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON value; raises ``ValueError`` (orjson.JSONDecodeError) on bad input."""
    return orjson.loads(data)


def dumps_pretty(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode()
