"""A generator of malformed and hostile session files (at least 30 kinds), plus paths that are
not regular files at all (a FIFO, a symlink to ``/dev/zero``, a directory)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

HEADER = {
    "type": "session",
    "version": 3,
    "id": "hostile",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/tmp",
}


def line(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def msg(entry_id: str, parent: object, text: str = "hi", role: str = "user") -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


def chain(n: int, prefix: str = "e") -> bytes:
    parts = [line(HEADER)]
    parent: str | None = None
    for i in range(n):
        entry_id = f"{prefix}{i}"
        parts.append(line(msg(entry_id, parent, f"m{i}")))
        parent = entry_id
    return b"".join(parts)


def nested(depth: int) -> dict[str, object]:
    """``{"x": [{"x": [ ... ]}]}``: ``2 * depth`` levels of nesting, built without recursion."""
    root: dict[str, object] = {"x": None}
    current = root
    for _ in range(depth):
        child: dict[str, object] = {"x": None}
        current["x"] = [child]
        current = child
    return root


def _deep_line(obj: object) -> bytes:
    # json.dumps recurses; 1,000 levels need a little more stack than the default allows.
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        return line(obj)
    finally:
        sys.setrecursionlimit(old)


def deep_tool_arguments() -> bytes:
    """Tool-call arguments and tool-result details ~1,000 levels deep (orjson reads them)."""
    args = nested(500)
    call = {
        "type": "message",
        "id": "call",
        "parentId": "u",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "deep"},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": args},
                {"type": "toolCall", "id": "c2", "name": "custom_tool", "arguments": args},
            ],
            "stopReason": "toolUse",
            "timestamp": 2,
        },
    }
    result = {
        "type": "message",
        "id": "result",
        "parentId": "call",
        "timestamp": "2026-01-01T00:00:03.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "ok"}],
            "details": args,
            "isError": False,
            "timestamp": 3,
        },
    }
    return line(HEADER) + line(msg("u", None)) + _deep_line(call) + _deep_line(result)


def hidden_marker_chain(n: int = 5_000) -> bytes:
    """A message under ``n`` chained leaf markers (a tree walk that recursed would crash)."""
    parts = [line(HEADER), line(msg("root", None))]
    parent = "root"
    for i in range(n):
        marker = {
            "type": "custom",
            "id": f"mk{i}",
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:02.000Z",
            "customType": "pitui.leaf",
        }
        parts.append(line(marker))
        parent = f"mk{i}"
    parts.append(line(msg("after", parent, "under the markers")))
    return b"".join(parts)


def _cases() -> dict[str, Callable[[], bytes]]:
    h = line(HEADER)
    return {
        "empty": lambda: b"",
        "whitespace_only": lambda: b"  \n\n\t\n",
        "header_only": lambda: h,
        "header_no_newline": lambda: h.rstrip(b"\n"),
        "no_header": lambda: line(msg("a", None)),
        "garbage": lambda: b"this is not json at all\n",
        "binary": lambda: bytes(range(256)) * 40,
        "bom_crlf_blank": lambda: (
            b"\xef\xbb\xbf"
            + h.replace(b"\n", b"\r\n")
            + b"\r\n\r\n"
            + line(msg("a", None)).replace(b"\n", b"\r\n")
        ),
        "cycle_on_leaf_path": lambda: (
            h + line(msg("a", "c")) + line(msg("b", "a")) + line(msg("c", "b"))
        ),
        "cycle_off_path": lambda: (
            h
            + line(msg("x", "y"))
            + line(msg("y", "x"))
            + line(msg("r", None))
            + line(msg("leaf", "r"))
        ),
        "self_parent": lambda: h + line(msg("a", "a")),
        "orphans": lambda: h + line(msg("a", "missing")) + line(msg("b", "gone")),
        "duplicate_ids": lambda: (
            h + line(msg("a", None, "one")) + line(msg("a", None, "two")) + line(msg("b", "a"))
        ),
        "duplicate_headers": lambda: h + line(msg("a", None)) + h + line(msg("b", "a")),
        "huge_single_line": lambda: h + line(msg("big", None, "x" * 50_000_000)),
        "invalid_utf8": lambda: (
            h + b'{"type":"message","id":"u","parentId":null,"timestamp":"t",'
            b'"message":{"role":"user","content":"caf\xe9 \xff\xfe","timestamp":1}}\n'
        ),
        "nul_bytes": lambda: h + b"\x00\x00\x00\n" + line(msg("a", None, "nul\x00inside")),
        "unknown_types_and_roles": lambda: (
            h
            + line(
                {"type": "alien", "id": "z", "parentId": None, "timestamp": "t", "payload": [1, 2]}
            )
            + line(msg("r", "z", "x", role="wizard"))
        ),
        "missing_fields": lambda: (
            h
            + line({"type": "message", "id": "a"})
            + line({"type": "message", "parentId": None})
            + line({"id": "b"})
        ),
        "wrong_types": lambda: (
            h
            + line({"type": 5, "id": "a"})
            + line({"type": "message", "id": 7})
            + line({"type": "message", "id": "p", "parentId": 12, "message": "str"})
            + line(
                {
                    "type": "compaction",
                    "id": "c",
                    "parentId": "p",
                    "summary": None,
                    "firstKeptEntryId": 3,
                    "tokensBefore": "many",
                }
            )
        ),
        "json_not_object": lambda: h + b'[1,2,3]\n"just a string"\n42\nnull\n',
        "deeply_nested_json": lambda: (
            h
            + b'{"type":"message","id":"d","parentId":null,"x":'
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}\n"
        ),
        "huge_numbers": lambda: (
            h
            + line(
                {
                    "type": "compaction",
                    "id": "c",
                    "parentId": None,
                    "summary": "s",
                    "firstKeptEntryId": "c",
                    "tokensBefore": 10**400,
                }
            )
        ),
        "lone_surrogates": lambda: (
            h + b'{"type":"message","id":"s","parentId":null,"timestamp":'
            b'"t","message":{"role":"user","content":"\\ud83d alone","timestamp":1}}\n'
        ),
        "torn_tail": lambda: h + line(msg("a", None)) + b'{"type":"message","id":"b","par',
        "deep_chain_100k": lambda: chain(100_000),
        "siblings_10k": lambda: (
            h
            + line(msg("root", None))
            + b"".join(line(msg(f"s{i}", "root", f"sib {i}")) for i in range(10_000))
        ),
        "markup_and_escapes": lambda: (
            h
            + line(
                msg(
                    "m",
                    None,
                    "[bold]x[/] [/] [x[0]] \x1b[31mred\x1b[0m \x1b]0;title\x07 "
                    "\x1b]52;c;aGVsbG8=\x07 \x1b[2J \u202eRTL \u200bzw",
                )
            )
        ),
        "escapes_everywhere": lambda: _escapes_everywhere(),
        "legacy_v1_bad_compaction": lambda: (
            line({"type": "session", "id": "v1", "timestamp": "2025-01-01T00:00:00.000Z"})
            + line(
                {
                    "type": "message",
                    "timestamp": "t",
                    "message": {"role": "user", "content": "a", "timestamp": 1},
                }
            )
            + line(
                {
                    "type": "compaction",
                    "timestamp": "t",
                    "summary": "s",
                    "firstKeptEntryIndex": 999,
                    "tokensBefore": 1,
                }
            )
        ),
        "context_edit_hostile": lambda: (
            h
            + line(msg("a", None))
            + line(
                {
                    "type": "context_edit",
                    "id": "e",
                    "parentId": "a",
                    "timestamp": "t",
                    "targetId": "a",
                    "replacement": {"content": 5},
                }
            )
            + line(
                {
                    "type": "context_edit",
                    "id": "f",
                    "parentId": "e",
                    "timestamp": "t",
                    "targetId": "nope",
                    "replacement": None,
                }
            )
        ),
        "label_on_missing": lambda: (
            h
            + line(msg("a", None))
            + line(
                {
                    "type": "label",
                    "id": "l",
                    "parentId": "a",
                    "timestamp": "t",
                    "targetId": "zzz",
                    "label": "[bold]x",
                }
            )
        ),
        "bad_timestamps": lambda: (
            h
            + line(msg("a", None))
            + line({**msg("b", "a"), "timestamp": 12345})
            + line({**msg("c", "a"), "timestamp": None})
        ),
        "header_missing_id": lambda: line({"type": "session", "version": 3}) + line(msg("a", None)),
        "v2_entry_without_id": lambda: (
            line({**HEADER, "version": 2})
            + line(msg("a", None))
            + line({k: v for k, v in msg("x", "a").items() if k != "id"})
            + line({**msg("y", "a"), "id": 7})
            + line(msg("b", "a", "after the id-less ones"))
        ),
        "deep_tool_arguments": deep_tool_arguments,
        "hidden_marker_chain": hidden_marker_chain,
        "system_message_weird": lambda: (
            h
            + line(
                {
                    "type": "message",
                    "id": "s",
                    "parentId": None,
                    "timestamp": "t",
                    "message": {
                        "role": "system",
                        "content": None,
                        "sections": {"a": None, "b": 5},
                        "toolsAdded": [None, {"name": 3}],
                    },
                }
            )
        ),
    }


HOSTILE = (
    "\x1b]0;PWNED\x07 \x1b[2J \x9b2J \x1bP+q\x1b\\ \x1b]52;c;aGVsbG8=\x07 \x07bell "
    "\x90dcs\x9c \u202eRTL\u202c \u2028sep \x7fdel \x08bs [bold]x[/]"
)
"""Terminal escapes of every kind: OSC titles and clipboard writes, CSI (7-bit and C1), DCS,
bells, backspaces, bidi overrides and line separators, plus Rich markup."""


def _escapes_everywhere() -> bytes:
    """Hostile text in every field the CLI prints: messages, tool calls and results, names,
    labels, summaries, custom types, the model and the header's cwd."""
    x = HOSTILE
    header = line(
        {
            "type": "session",
            "version": 3,
            "id": "esc",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "cwd": f"/tmp/{x}",
        }
    )

    def entry(entry_id: str, parent: str | None, **fields: object) -> bytes:
        return line(
            {"id": entry_id, "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z", **fields}
        )

    return b"".join(
        [
            header,
            entry(
                "s1",
                None,
                type="message",
                message={
                    "role": "system",
                    "content": x,
                    "sections": {x: x},
                    "toolsAdded": [{"name": x, "description": x, "parameters": {}}],
                },
            ),
            entry(
                "u1",
                "s1",
                type="message",
                message={"role": "user", "content": [{"type": "text", "text": x}], "timestamp": 1},
            ),
            entry(
                "a1",
                "u1",
                type="message",
                message={
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": x},
                        {"type": "text", "text": x},
                        {"type": "toolCall", "id": "c1", "name": x, "arguments": {"path": x}},
                        {
                            "type": "toolCall",
                            "id": "c2",
                            "name": "bash",
                            "arguments": {"command": x},
                        },
                    ],
                    "provider": x,
                    "model": x,
                    "stopReason": "toolUse",
                    "timestamp": 2,
                    "usage": {"input": 1, "output": 1, "totalTokens": 2},
                },
            ),
            entry(
                "t1",
                "a1",
                type="message",
                message={
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": x,
                    "content": [{"type": "text", "text": x}],
                    "isError": True,
                    "timestamp": 3,
                },
            ),
            entry(
                "b1",
                "t1",
                type="message",
                message={
                    "role": "bashExecution",
                    "command": x,
                    "output": x,
                    "exitCode": 1,
                    "timestamp": 4,
                },
            ),
            entry("k1", "b1", type="compaction", summary=x, firstKeptEntryId="u1", tokensBefore=5),
            entry("l1", "k1", type="label", targetId="u1", label=x),
            entry("n1", "l1", type="session_info", name=x),
            entry("m1", "n1", type="model_change", provider=x, modelId=x),
            entry("c1m", "m1", type="custom_message", customType=x, content=x, display=True),
            entry("x1", "c1m", type="custom", customType=x, data={x: x}),
            entry("bs", "x1", type="branch_summary", fromId="u1", summary=x),
            entry(
                "a2",
                "bs",
                type="message",
                message={
                    "role": "assistant",
                    "content": [],
                    "stopReason": "error",
                    "errorMessage": x,
                    "timestamp": 5,
                },
            ),
        ]
    )


CASES = _cases()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _directory(path: Path) -> None:
    path.mkdir()


SPECIAL: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "symlink_to_dev_zero": _dev_zero,
    "directory": _directory,
}
"""Session paths that are not regular files: each must be refused in one sentence, at once."""


def make_special(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, make in SPECIAL.items():
        path = folder / f"{name}.jsonl"
        if not os.path.lexists(path):
            make(path)
        out[name] = path
    return out


def write_corpus(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, make in CASES.items():
        path = folder / f"{name}.jsonl"
        path.write_bytes(make())
        out[name] = path
    return out
