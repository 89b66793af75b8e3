"""Headless inspection: ``pitui context``, ``pitui tree``, ``pitui sessions``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from pitui.cli.errors import CliError
from pitui.cli.output import json_line, note, print_json, say
from pitui.cli.session_args import session_file
from pitui.session import SessionStore
from pitui.session.oneline import entry_text
from pitui.session.projection import Projection
from pitui.session.shapes import message_text, tool_calls
from pitui.text import one_line, terminal_line

SESSION_HELP = "session file (.jsonl) or session id prefix (as `pitui sessions` prints)"


def register(sub: Any) -> None:
    p = sub.add_parser("context", help="print what the model sees at a leaf (the projection)")
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument("--leaf", metavar="ID", help="entry id (or unique prefix) to project at")
    p.add_argument(
        "--diff",
        metavar="ID",
        help="compare with the context at entry ID: messages added, dropped, compacted, "
        "summarized or edited, the token change, system prompt and tool changes",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_context, fast_exit=True)

    p = sub.add_parser("tree", help="print the session tree with the active path marked")
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--filter",
        default="default",
        choices=["default", "no-tools", "user-only", "labeled-only", "all"],
        help="which entries to show (as pi's /tree filters; default hides bookkeeping)",
    )
    p.set_defaults(handler=cmd_tree, fast_exit=True)

    p = sub.add_parser(
        "sessions",
        help="list sessions of this directory (newest first)",
        description="This directory's sessions, newest first, each with the shortest id "
        "prefix that is unique among those listed (every command taking a session accepts "
        "it). `pitui --session-dir DIR sessions` lists every session in DIR, from any "
        "directory.",
    )
    p.add_argument("--all", action="store_true", help="every session, not only this directory's")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(handler=cmd_sessions, fast_exit=True)


def open_for_reading(file: str) -> SessionStore:
    """Open a session read-only and print its load warnings on stderr."""
    store = SessionStore.open(file, read_only=True)
    for warning in store.warnings:
        note(f"warning: {file}: {warning}")
    return store


def resolve_entry_id(store: SessionStore, value: str) -> str:
    """An exact entry id, or a unique prefix of one."""
    if value in store:
        return value
    matches = [n.id for n in store.nodes() if n.id.startswith(value)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(f"Entry {value} not found in {store.path}.")
    shown = ", ".join(matches[:10]) + (" …" if len(matches) > 10 else "")
    raise CliError(f"Entry id prefix {value} is ambiguous: {shown}.")


def projection_json(store: SessionStore, projection: Projection) -> dict[str, Any]:
    return {
        "leafId": projection.leaf_id,
        "model": projection.model,
        "thinkingLevel": projection.thinking_level,
        "messages": projection.messages,
        "sourceEntryIds": projection.source_entry_ids,
        "pathIds": [n.id for n in store.path_to(projection.leaf_id)],
        "systemPromptText": projection.system_prompt_text,
        "currentToolNames": projection.tool_names,
        "contextEntryIds": projection.context_entry_ids,
        "currentSystemMessage": projection.system_message,
        "sessionName": store.session_name,
    }


def cmd_context(args: argparse.Namespace) -> int:
    store = open_for_reading(session_file(args))
    try:
        leaf = resolve_entry_id(store, args.leaf) if args.leaf else store.leaf_id
        if args.diff:
            from pitui.cli.report_cmds import print_context_diff

            print_context_diff(store, leaf, resolve_entry_id(store, args.diff), args.json)
            return 0
        projection = store.project(leaf)
        if args.json:
            print_json(projection_json(store, projection))
        else:
            say(render_context(store, projection))
    finally:
        store.close()
    return 0


def _short(text: str, width: int = 72) -> str:
    return one_line(text, width)


def message_preview(message: dict[str, Any]) -> str:
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        return _short(str(message.get("summary") or ""))
    if role == "bashExecution":
        return _short(f"$ {message.get('command', '')}")
    if role == "system":
        names = list((message.get("sections") or {}).keys())
        tools = [t.get("name") for t in message.get("toolsAdded") or [] if isinstance(t, dict)]
        parts = []
        if names:
            parts.append("sections: " + ", ".join(names))
        if tools:
            parts.append("tools: " + ", ".join(str(t) for t in tools))
        return _short("; ".join(parts) or "(empty)")
    text = message_text(message, " ")
    if not text and role == "assistant":
        calls = [f"{b.get('name')}(…)" for b in tool_calls(message)]
        text = " ".join(calls) or f"({message.get('stopReason', 'no content')})"
    return _short(text)


def render_context(store: SessionStore, projection: Projection) -> str:
    from pitui.compaction.tokens import estimate_tokens

    model = projection.model
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "(none)"
    lines = [
        f"session {store.session_id}  leaf {projection.leaf_id or '(none)'}",
        f"model {model_text}  thinking {projection.thinking_level}",
    ]
    system = projection.system_message
    if system is not None:
        sections = list((system.get("sections") or {}).keys())
        lines.append(
            f"system prompt: {len(sections)} sections ({', '.join(sections) or 'none'}), "
            f"tools: {', '.join(projection.tool_names) or 'none'}, "
            f"~{estimate_tokens(system):,} tokens"
        )
    lines.append("")
    lines.append(f"{'#':>4}  {'entry':<8}  {'role':<17} {'tokens':>7}  text")
    total = 0
    for i, (message, source) in enumerate(
        zip(projection.messages, projection.source_entry_ids, strict=True), start=1
    ):
        tokens = estimate_tokens(message)
        total += tokens
        edited = "*" if source in projection.edits else " "
        lines.append(
            f"{i:>4}  {source:<8}{edited} {message.get('role')!s:<17} {tokens:>7,}  "
            f"{message_preview(message)}"
        )
    lines.append("")
    lines.append(f"{len(projection.messages)} messages, ~{total:,} tokens (chars/4 estimate)")
    if projection.edits:
        lines.append("* content replaced by a context edit")
    return "\n".join(lines)


def tree_json(store: SessionStore) -> dict[str, Any]:
    return {
        "leafId": store.leaf_id,
        "children": store.tree(),
        "labels": store.labels,
        "sessionName": store.session_name,
    }


def render_tree(store: SessionStore, mode: str) -> str:
    from pitui.session.flatten import flatten

    rows = flatten(store, mode)
    if not rows:
        return "(no entries)"
    calls: dict[str, dict[str, Any]] = {}

    def find_call(call_id: str) -> dict[str, Any] | None:
        return calls.get(call_id)

    out: list[str] = []
    leaf_id = store.leaf_id
    for row in rows:
        entry = store.data(row.node)
        message = entry.get("message")
        for block in tool_calls(message):
            calls[str(block.get("id"))] = block
        label = store.label_of(row.node.id)
        text = entry_text(entry, find_call)
        marker = "• " if row.on_path else ""
        labelled = f"[{label}] " if label else ""
        suffix = "  ← leaf" if row.node.id == leaf_id else ""
        out.append(f"{row.node.id}  {row.gutter}{row.connector}{marker}{labelled}{text}{suffix}")
    return "\n".join(out)


def cmd_tree(args: argparse.Namespace) -> int:
    store = open_for_reading(session_file(args))
    try:
        if args.json:
            print_json(tree_json(store))
        else:
            say(render_tree(store, args.filter))
    finally:
        store.close()
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    from pitui.config import load_settings, resolve_session_folder, sessions_root
    from pitui.session.listing import list_sessions, unique_prefixes

    cwd = os.getcwd()
    settings = load_settings(cwd)
    folder, explicit = resolve_session_folder(cwd, args.session_dir, settings.session_dir)
    if args.all and not explicit:
        root = sessions_root()
        folders = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
        infos = list_sessions(folders)
    elif args.all or args.session_dir:
        # A folder named on the command line is listed whole, from any directory.
        infos = list_sessions([folder])
    else:
        infos = list_sessions([folder], cwd=cwd)
    if args.json:
        for info in infos:
            sys.stdout.write(json_line(info.to_json()))
        sys.stdout.flush()
        return 0
    if not infos:
        say(
            f"No sessions in {folder}."
            if args.session_dir
            else f"No sessions for {cwd} in {folder}."
        )
        return 0
    short = unique_prefixes([info.id for info in infos])
    width = max(len(p) for p in short.values())
    for info in infos:
        title = info.name or _short(info.firstMessage, 60)
        say(
            f"{info.modified[:16].replace('T', ' ')}  {short[info.id]:<{width}}  "
            f"{info.messageCount:>5} msgs  {terminal_line(title)}"
        )
        say(f"{'':16}  {terminal_line(str(Path(info.path)))}")
    return 0
