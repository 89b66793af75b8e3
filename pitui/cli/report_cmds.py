"""Headless reports: ``pitui stats``, ``pitui export`` and ``pitui context --diff``.

Text output goes through :func:`pitui.text.terminal_text` (session text never reaches the
terminal with control sequences); JSON output is exact.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pitui.cli.errors import CliError
from pitui.cli.inspect_cmds import SESSION_HELP, open_for_reading, resolve_entry_id
from pitui.cli.session_args import session_file
from pitui.session.codec import dumps_pretty
from pitui.session.store import SessionStore
from pitui.text import terminal_text

EXPORT_FORMATS = ("html", "jsonl", "md")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "stats",
        help="entries, branches, messages, tokens and cost (whole tree and per branch), "
        "compactions, files touched",
    )
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--branches",
        type=int,
        default=20,
        metavar="N",
        help="branches listed in the text output (default 20; 0: all)",
    )
    p.set_defaults(handler=cmd_stats, fast_exit=True)

    p = sub.add_parser(
        "export",
        help="write the session as a self-contained HTML page, Markdown or JSONL",
        description="html: the whole tree (or --branch-only) as one self-contained page; md: "
        "the active branch as readable Markdown; jsonl: the active branch as a session file. "
        "Files are written 0600.",
    )
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument(
        "--format", choices=EXPORT_FORMATS, default=None, help="default: from -o, else html"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="output file ('-': standard output); default: <session file name>.<format> here",
    )
    p.add_argument("--leaf", metavar="ID", help="the leaf (active branch) to export at")
    p.add_argument(
        "--branch-only",
        action="store_true",
        help="html: only the active branch, not the whole tree (md and jsonl always are)",
    )
    p.set_defaults(handler=cmd_export, fast_exit=True)


def _write_lines(lines: list[str]) -> None:
    sys.stdout.write(terminal_text("\n".join(lines)) + "\n")


def print_context_diff(store: SessionStore, before: str | None, after: str, as_json: bool) -> None:
    from pitui.compaction.context_diff import describe_diff, diff_contexts

    diff = diff_contexts(store, before, after)
    if as_json:
        sys.stdout.write(dumps_pretty(diff.to_json()) + "\n")
    else:
        _write_lines(describe_diff(diff))


def cmd_stats(args: argparse.Namespace) -> int:
    from pitui.compaction.session_stats import describe_stats, session_stats

    store = open_for_reading(session_file(args))
    try:
        stats = session_stats(store)
        if args.json:
            sys.stdout.write(dumps_pretty(stats.to_json()) + "\n")
        else:
            _write_lines(describe_stats(stats, args.branches or None))
    finally:
        store.close()
    return 0


def export_format(fmt: str | None, output: str | None) -> str:
    """The format asked for, else the output file's suffix, else html."""
    if fmt:
        return fmt
    if output and output != "-":
        suffix = Path(output).suffix.lower().lstrip(".")
        if suffix in ("htm", "html"):
            return "html"
        if suffix in ("md", "markdown"):
            return "md"
        if suffix == "jsonl":
            return "jsonl"
    return "html"


def cmd_export(args: argparse.Namespace) -> int:
    from pitui.export import default_name, export_session, render

    fmt = export_format(args.format, args.output)
    store = open_for_reading(session_file(args))
    try:
        leaf = resolve_entry_id(store, args.leaf) if args.leaf else None
        if args.output == "-":
            data = render(store, fmt, leaf_id=leaf, branch_only=args.branch_only)
            if fmt == "md":
                data = terminal_text(data.decode("utf-8")).encode("utf-8")
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
            return 0
        target = Path(args.output) if args.output else Path.cwd() / default_name(store, fmt)
        if target.is_dir():
            target = target / default_name(store, fmt)
        try:
            size = export_session(store, target, fmt, leaf_id=leaf, branch_only=args.branch_only)
        except OSError as exc:
            raise CliError(
                f"Could not write {target}: {exc.strerror or exc}; choose another path with -o."
            ) from exc
    finally:
        store.close()
    print(terminal_text(f"Exported {fmt} to {target} ({size:,} bytes)."), file=sys.stderr)
    return 0
