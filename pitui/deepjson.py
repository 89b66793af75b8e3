"""JSON text for data of any depth, and bounds for walking it.

Session files can hold values nested about a thousand levels deep (orjson reads up to 1,024
levels; a model can send tool-call arguments like that). The standard library encodes with
recursion and raises ``RecursionError`` long before, and so does everything that walks such a
value recursively. :func:`dumps` gives exactly ``json.dumps``'s text at any depth (the C
encoder when it can, an iterative one when it cannot); :func:`depth_exceeds` and :func:`clip`
let display code bound what it renders.

Pure: stdlib only, so every layer may use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

_MISSING: Any = object()


def depth_exceeds(value: Any, limit: int) -> bool:
    """True when ``value`` nests containers more than ``limit`` levels deep (stops early)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def clip(value: Any, max_depth: int, marker: str = "…") -> Any:
    """A copy of ``value`` where containers deeper than ``max_depth`` become ``marker``."""
    if not isinstance(value, dict | list | tuple):
        return value
    if max_depth <= 0:
        return marker
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    while stack:
        source, target, depth = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, dict | list | tuple):
                if depth >= max_depth:
                    child: Any = marker
                else:
                    child = {} if isinstance(item, dict) else []
                    stack.append((item, child, depth + 1))
            else:
                child = item
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root


def dumps(
    value: Any,
    *,
    indent: int | None = None,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(value, ...)`` with the same text, for any depth."""
    try:
        return json.dumps(
            value,
            indent=indent,
            ensure_ascii=ensure_ascii,
            separators=separators,
            default=default,
        )
    except RecursionError:
        pass
    return _encode(value, indent, ensure_ascii, separators, default)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _encode(
    value: Any,
    indent: int | None,
    ensure_ascii: bool,
    separators: tuple[str, str] | None,
    default: Callable[[Any], Any] | None,
) -> str:
    """The iterative encoder: json.dumps's output, built with an explicit stack."""
    string = encode_basestring_ascii if ensure_ascii else encode_basestring
    if separators is not None:
        item_sep, key_sep = separators
    else:
        item_sep, key_sep = (", ", ": ") if indent is None else (",", ": ")
    out: list[str] = []

    def scalar(item: Any) -> str | None:
        if isinstance(item, str):
            return string(item)
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, int):
            return int.__repr__(item)
        if isinstance(item, float):
            return _float(item)
        return None

    # A frame: (iterator over items, is_dict, depth, first item still to come).
    stack: list[list[Any]] = []

    def newline(depth: int) -> str:
        return "\n" + " " * (indent * depth) if indent is not None else ""

    def open_container(item: Any, depth: int) -> None:
        is_dict = isinstance(item, dict)
        if not item:
            out.append("{}" if is_dict else "[]")
            return
        out.append("{" if is_dict else "[")
        iterator = iter(item.items()) if is_dict else iter(item)
        stack.append([iterator, is_dict, depth + 1, True])

    def emit(item: Any, depth: int) -> None:
        for _ in range(100):  # ``default`` may return something that needs ``default`` again
            text = scalar(item)
            if text is not None:
                out.append(text)
                return
            if isinstance(item, dict | list | tuple):
                open_container(item, depth)
                return
            if default is None:
                raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
            item = default(item)
        raise ValueError("Circular reference detected")

    emit(value, 0)
    while stack:
        frame = stack[-1]
        iterator, is_dict, depth, first = frame
        nxt = next(iterator, _MISSING)
        if nxt is _MISSING:
            stack.pop()
            out.append(newline(depth - 1) + ("}" if is_dict else "]"))
            continue
        out.append(newline(depth) if first else item_sep + newline(depth))
        frame[3] = False
        if is_dict:
            key: Any
            key, item = nxt
            if isinstance(key, str):
                key_text = string(key)
            elif key is True:
                key_text = '"true"'
            elif key is False:
                key_text = '"false"'
            elif key is None:
                key_text = '"null"'
            elif isinstance(key, int):
                key_text = string(int.__repr__(key))
            elif isinstance(key, float):
                key_text = string(_float(key))
            else:
                raise TypeError(f"keys must be str, int, float, bool or None, not {type(key)}")
            out.append(key_text + key_sep)
        else:
            item = nxt
        emit(item, depth)
    return "".join(out)
