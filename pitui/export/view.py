"""The data the HTML export's page renders: the tree rows, each node's projection (as deltas,
see :mod:`pitui.session.projection_map`), each message as a list of render blocks, the system
prompt states, usage and statistics.

All knowledge of pi's shapes stays here, in Python (through :mod:`pitui.session.shapes`); the
page's script only renders a small block vocabulary:

- ``["md", text]`` Markdown, ``["text", text]`` plain text, ``["think", text, redacted]``,
  ``["img", mime, base64]``, ``["error", text]``, ``["note", text]``;
- ``["call", id, name, title, arguments_json, diff]`` a tool call (``diff``: rows
  ``[op, text]`` with op one of `` ``, ``+``, ``-``, ``@``; or null);
- ``["result", call_id, tool_name, is_error, blocks, diff]``, ``["bash", command, exit_code,
  blocks, excluded]``, ``["ansi", [[text, style index], …]]``, ``["custom", type, text]``;
- ``["compaction", summary, tokens_before, first_kept_node, first_kept_id, read, modified]``
  and ``["branch", summary, from_node, from_id]``.

Text shown on the page has escape sequences removed (tool output keeps SGR colours as styles);
it is put in the page as data only and set with ``textContent`` by the script.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from pitui import __version__
from pitui.compaction.session_stats import entry_usage, session_stats, usage_cost
from pitui.compaction.tokens import estimate_tokens
from pitui.export.ansi import has_sgr, sgr_runs
from pitui.session.flatten import FILTER_MODES, flatten, make_filter
from pitui.session.oneline import entry_text, tool_call_text
from pitui.session.projection_map import ProjectionMap, build_projection_map
from pitui.session.shapes import blocks as content_blocks
from pitui.session.shapes import content_text, entry_message, tool_calls
from pitui.session.store import SessionStore
from pitui.session.system_prompt import system_message_text
from pitui.text import js_stringify, one_line, strip_escapes

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
ROW_TEXT = 200
FLAG_ACTIVE = 1
FLAG_LEAF = 2


def _clean(text: Any) -> str:
    return strip_escapes(text) if isinstance(text, str) else ""


def _line(text: str, limit: int = ROW_TEXT) -> str:
    return one_line(text, limit)


class _Styles:
    """The page's table of SGR styles (index per distinct style)."""

    def __init__(self) -> None:
        self.table: list[dict[str, Any]] = []
        self._index: dict[tuple[tuple[str, Any], ...], int] = {}

    def index(self, style: dict[str, Any] | None) -> int:
        if style is None:
            return -1
        key = tuple(sorted(style.items()))
        found = self._index.get(key)
        if found is None:
            found = len(self.table)
            self._index[key] = found
            self.table.append(style)
        return found


def diff_rows(before: str, after: str) -> list[list[str]]:
    """A unified diff of two texts as ``[op, line]`` rows."""
    a = before.replace("\r\n", "\n").split("\n")
    b = after.replace("\r\n", "\n").split("\n")
    rows: list[list[str]] = []
    for line in difflib.unified_diff(a, b, lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        op = line[:1] if line[:1] in ("+", "-", "@") else " "
        rows.append([op, strip_escapes(line[1:] if op != "@" else line)])
    return rows


def parse_unified_diff(text: str) -> list[list[str]]:
    """Rows of a stored unified diff (an edit result's ``details.diff``)."""
    rows: list[list[str]] = []
    for line in strip_escapes(text).split("\n"):
        if line.startswith(("---", "+++")):
            continue
        op = line[:1] if line[:1] in ("+", "-", "@") else " "
        rows.append([op, line if op == "@" else line[1:]])
    return rows


def _edit_diff(arguments: Any) -> list[list[str]] | None:
    """The diff an ``edit`` call asks for (pi's ``edits`` list or one oldText/newText pair)."""
    if not isinstance(arguments, dict):
        return None
    edits = arguments.get("edits")
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                old, new = edit.get("oldText"), edit.get("newText")
                if isinstance(old, str) and isinstance(new, str):
                    pairs.append((old, new))
    elif isinstance(arguments.get("oldText"), str) and isinstance(arguments.get("newText"), str):
        pairs.append((arguments["oldText"], arguments["newText"]))
    if not pairs:
        return None
    rows: list[list[str]] = []
    for old, new in pairs:
        rows.extend(diff_rows(old, new))
    return rows


class BlockBuilder:
    """Render blocks for messages as the model sees them."""

    def __init__(self, index_of: Callable[[str], int]) -> None:
        self.styles = _Styles()
        self.index_of = index_of

    def _content(self, content: Any, ansi: bool = False) -> list[list[Any]]:
        out: list[list[Any]] = []
        items: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else []
        items += content_blocks(content)
        for block in items:
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if ansi and has_sgr(text):
                    runs = [[t, self.styles.index(s)] for t, s in sgr_runs(text)]
                    out.append(["ansi", runs])
                else:
                    out.append(["text", _clean(text)])
            elif kind == "image":
                out.append(self._image(block))
        return out

    @staticmethod
    def _image(block: dict[str, Any]) -> list[Any]:
        mime, data = block.get("mimeType"), block.get("data")
        if mime in IMAGE_TYPES and isinstance(data, str) and _BASE64.fullmatch(data):
            return ["img", mime, "".join(data.split())]
        return ["note", f"[image: {_line(str(mime))}, not shown]"]

    def message(self, message: dict[str, Any], entry: dict[str, Any]) -> list[list[Any]]:
        role = message.get("role")
        if role == "user":
            return self._content(message.get("content"))
        if role == "assistant":
            return self._assistant(message)
        if role == "toolResult":
            details = message.get("details")
            diff = None
            if isinstance(details, dict) and isinstance(details.get("diff"), str):
                diff = parse_unified_diff(details["diff"])
            return [
                [
                    "result",
                    _clean(str(message.get("toolCallId") or "")),
                    _clean(str(message.get("toolName") or "tool")),
                    bool(message.get("isError")),
                    self._content(message.get("content"), ansi=True),
                    diff,
                ]
            ]
        if role == "bashExecution":
            output = message.get("output")
            inner = self._content(output if isinstance(output, str) else "", ansi=True)
            exit_code = message.get("exitCode")
            return [
                [
                    "bash",
                    _clean(str(message.get("command") or "")),
                    exit_code if isinstance(exit_code, int) else None,
                    inner,
                    bool(message.get("excludeFromContext")),
                ]
            ]
        if role == "custom":
            return [
                [
                    "custom",
                    _clean(str(message.get("customType") or "custom")),
                    _clean(content_text(message.get("content"), "\n")),
                ]
            ]
        if role == "compactionSummary":
            raw_details = entry.get("details")
            facts: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
            first = entry.get("firstKeptEntryId")
            first_id = first if isinstance(first, str) else ""
            tokens = entry.get("tokensBefore")
            return [
                [
                    "compaction",
                    _clean(str(message.get("summary") or "")),
                    tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
                    self.index_of(first_id),
                    _clean(first_id),
                    [_clean(p) for p in facts.get("readFiles") or [] if isinstance(p, str)],
                    [_clean(p) for p in facts.get("modifiedFiles") or [] if isinstance(p, str)],
                ]
            ]
        if role == "branchSummary":
            from_id = message.get("fromId")
            from_text = from_id if isinstance(from_id, str) else ""
            return [
                [
                    "branch",
                    _clean(str(message.get("summary") or "")),
                    self.index_of(from_text),
                    _clean(from_text),
                ]
            ]
        if role == "system":
            return [["system"]]
        return [["note", f"[{_line(str(role))} message]"]]

    def _assistant(self, message: dict[str, Any]) -> list[list[Any]]:
        out: list[list[Any]] = []
        for block in content_blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                out.append(["md", _clean(block["text"])])
            elif kind == "thinking":
                thinking = block.get("thinking")
                out.append(
                    ["think", _clean(thinking if isinstance(thinking, str) else ""),
                     bool(block.get("redacted"))]
                )  # fmt: skip
            elif kind == "toolCall":
                name = str(block.get("name") or "tool")
                arguments = block.get("arguments")
                command = arguments.get("command") if isinstance(arguments, dict) else None
                if name == "bash" and isinstance(command, str) and len(arguments or {}) <= 2:
                    pretty = "$ " + command
                else:
                    pretty = _pretty_json(arguments)
                diff = _edit_diff(arguments) if name == "edit" else None
                out.append(
                    [
                        "call",
                        _clean(str(block.get("id") or "")),
                        _clean(name),
                        _line(tool_call_text(name, arguments)),
                        _clean(pretty),
                        diff,
                    ]
                )
        stop = message.get("stopReason")
        if stop == "error":
            out.append(["error", _clean(str(message.get("errorMessage") or "error"))])
        elif stop == "aborted":
            out.append(["note", "(aborted)"])
        elif stop == "length":
            out.append(["note", "(cut off: the reply reached the output limit)"])
        return out


def _kind(node_type: str, role: str | None) -> str:
    return role if node_type == "message" and role else node_type


def _usage_row(entry: dict[str, Any]) -> list[Any] | int:
    usage = entry_usage(entry)
    if not isinstance(usage, dict):
        return 0

    def number(key: str) -> int:
        value = usage.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            return 0
        return int(value) if abs(value) < 1e15 else 0

    return [
        number("input"),
        number("output"),
        number("cacheRead"),
        number("cacheWrite"),
        round(usage_cost(usage), 6),
    ]


def page_data(
    store: SessionStore, *, branch_only: bool = False, exported_at: str | None = None
) -> dict[str, Any]:
    """Everything the page shows, for the store's current leaf."""
    path = store.path_to()
    path_ids = {n.id for n in path}
    leaf_id = store.leaf_id
    pmap: ProjectionMap = build_projection_map(store, path_ids if branch_only else None)
    index_of = pmap.index.get

    def node_index(entry_id: str) -> int:
        found = index_of(entry_id)
        return found if found is not None else -1

    builder = BlockBuilder(node_index)
    calls: dict[str, dict[str, Any]] = {}
    nodes: list[list[Any]] = []
    usage: list[Any] = []
    for node in pmap.nodes:
        entry = store.data(node)
        for call in tool_calls(entry_message(entry)):
            calls[str(call.get("id"))] = call
        parent = -1
        cur = node.parent
        while cur is not None and parent < 0:  # the nearest exported ancestor
            parent = node_index(cur.id)
            cur = cur.parent
        flags = (FLAG_ACTIVE if node.id in path_ids else 0) | (
            FLAG_LEAF if node.id == leaf_id else 0
        )
        label = store.label_of(node.id)
        timestamp = entry.get("timestamp")
        nodes.append(
            [
                _clean(node.id),
                parent,
                _clean(_kind(node.type, node.role)),
                _line(entry_text(entry, calls.get)),
                _line(label) if label else None,
                timestamp if isinstance(timestamp, str) else "",
                flags,
            ]
        )
        usage.append(_usage_row(entry))

    messages: list[dict[str, Any]] = []
    for variant, (key, message) in enumerate(zip(pmap.keys, pmap.messages, strict=True)):
        source = node_index(key[0])
        entry = store.find(key[0]) or {}
        edit = pmap.edit_of(variant)
        messages.append(
            {
                "r": _clean(str(message.get("role"))),
                "s": source,
                "t": estimate_tokens(message),
                "e": node_index(edit) if edit else -1,
                "b": builder.message(message, entry),
            }
        )

    systems = []
    for state in pmap.systems:
        raw_sections, raw_tools = state.get("sections"), state.get("toolsAdded")
        sections: dict[str, Any] = raw_sections if isinstance(raw_sections, dict) else {}
        tools: list[Any] = raw_tools if isinstance(raw_tools, list) else []
        systems.append(
            {
                "text": _clean(system_message_text(state)),
                "sections": [
                    [_clean(str(name)), _clean(value)]
                    for name, value in sections.items()
                    if isinstance(value, str)
                ],
                "tools": [
                    [
                        _clean(str(tool.get("name"))),
                        _clean(str(tool.get("description") or "")),
                        _clean(_pretty_json(tool.get("parameters"))),
                    ]
                    for tool in tools
                    if isinstance(tool, dict)
                ],
                "t": estimate_tokens(state),
            }
        )

    models: list[str] = []
    model_index: dict[str, int] = {}
    node_models: list[int] = []
    for model in pmap.model:
        if not model:
            node_models.append(-1)
            continue
        name = _line(f"{model.get('provider')}/{model.get('modelId')}")
        if name not in model_index:
            model_index[name] = len(models)
            models.append(name)
        node_models.append(model_index[name])

    rows: dict[str, list[int]] = {}
    gutters: dict[str, list[int]] = {}
    gutter_table: list[str] = []
    gutter_index: dict[str, int] = {}
    for mode in FILTER_MODES:
        if branch_only:
            shown = make_filter(store, mode)
            picked = [(n, "") for n in path if shown(n, path[-1] if path else None)]
        else:
            picked = [(r.node, r.gutter + r.connector) for r in flatten(store, mode)]
        mode_rows, mode_gutters = [], []
        for node, gutter in picked:
            i = node_index(node.id)
            if i < 0:
                continue
            if gutter not in gutter_index:
                gutter_index[gutter] = len(gutter_table)
                gutter_table.append(gutter)
            mode_rows.append(i)
            mode_gutters.append(gutter_index[gutter])
        rows[mode] = mode_rows
        gutters[mode] = mode_gutters

    stats = session_stats(store).to_json()
    if branch_only:
        stats["branches"] = [b for b in stats["branches"] if b["active"]]
    title = store.session_name or f"pitui session {store.session_id}"
    return {
        "v": 1,
        "meta": {
            "title": _line(title),
            "sessionId": _clean(store.session_id),
            "cwd": _clean(store.cwd),
            "leaf": node_index(leaf_id) if leaf_id else -1,
            "branchOnly": branch_only,
            "generator": f"pitui {__version__}",
            "exportedAt": exported_at,
        },
        "nodes": nodes,
        "usage": usage,
        "base": pmap.base,
        "added": pmap.added,
        "model": node_models,
        "thinking": pmap.thinking,
        "system": pmap.system,
        "models": models,
        "messages": messages,
        "systems": systems,
        "styles": builder.styles.table,
        "rows": rows,
        "gutters": gutters,
        "gutterTable": gutter_table,
        "stats": _clean_json(stats),
    }


def _clean_json(value: Any) -> Any:
    """Strings in a JSON value without escape sequences (labels and names in the stats)."""
    if isinstance(value, str):
        return strip_escapes(value)
    if isinstance(value, list):
        return [_clean_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean_json(v) for k, v in value.items()}
    return value


def _pretty_json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (TypeError, orjson.JSONEncodeError):
        pass  # lone surrogates, integers past 64 bits, absurd depth: the stdlib or a stand-in
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        return js_stringify(value)


def _finite(value: Any) -> Any:
    """NaN and infinities (which JSON cannot hold) as null, at any depth."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def js_safe_json(value: Any) -> str:
    """JSON for a ``<script type="application/json">`` block: ``<``, ``>``, ``&``, U+2028/9,
    DEL and C1 controls and lone surrogates as ``\\u`` escapes (nothing can end the block)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


_UNSAFE = re.compile("[<>&\u2028\u2029\x7f-\x9f\ud800-\udfff]")

__all__ = ["js_safe_json", "js_stringify", "page_data"]
