"""``/export [html|md|jsonl] [--leaf ID] [--branch-only] [path]``: the same exports as
``pitui export``, written in a thread from a snapshot of the session (never blocking the UI)."""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pitui.export import FORMATS, default_name, export_session
from pitui.ui.snapshot import resolve_entry_id, take_snapshot

if TYPE_CHECKING:
    from pitui.ui.commands import CommandContext

USAGE = "/export [html|md|jsonl] [--leaf ID] [--branch-only] [path]"


class ExportUsageError(ValueError):
    pass


@dataclass
class ExportRequest:
    fmt: str = "html"
    leaf: str | None = None
    branch_only: bool = False
    path: str | None = None


def parse_export_args(arg: str) -> ExportRequest:
    """Parse the command's arguments; raises :class:`ExportUsageError` with one sentence."""
    try:
        parts = shlex.split(arg)
    except ValueError as exc:
        raise ExportUsageError(f"Could not read the arguments ({exc}); usage: {USAGE}.") from exc
    request = ExportRequest()
    fmt_given = False
    i = 0
    while i < len(parts):
        part = parts[i]
        if part in FORMATS and not fmt_given and request.path is None:
            request.fmt, fmt_given = part, True
        elif part == "--branch-only":
            request.branch_only = True
        elif part == "--leaf" or part.startswith("--leaf="):
            if part == "--leaf":
                i += 1
                if i >= len(parts):
                    raise ExportUsageError(f"--leaf needs an entry id; usage: {USAGE}.")
                request.leaf = parts[i]
            else:
                request.leaf = part.split("=", 1)[1]
        elif part.startswith("--"):
            raise ExportUsageError(f"Unknown option {part}; usage: {USAGE}.")
        elif request.path is None:
            request.path = part
        else:
            raise ExportUsageError(f"One output path only; usage: {USAGE}.")
        i += 1
    if not fmt_given and request.path:
        suffix = Path(request.path).suffix.lower()
        request.fmt = {".md": "md", ".jsonl": "jsonl"}.get(suffix, "html")
    return request


async def cmd_export(ctx: CommandContext, arg: str) -> None:
    try:
        request = parse_export_args(arg)
    except ExportUsageError as exc:
        ctx.say(str(exc), "warning")
        return
    store = ctx.app.store
    leaf = store.leaf_id
    if request.leaf is not None:
        leaf = resolve_entry_id(store, request.leaf)
        if leaf is None:
            ctx.say(f"No single entry matches {request.leaf}; give more of its id.", "warning")
            return
    target = Path(request.path).expanduser() if request.path else None
    if target is None:
        target = Path(ctx.app.cwd) / default_name(store, request.fmt)
    elif not target.is_absolute():
        target = Path(ctx.app.cwd) / target
    if target.is_dir():
        target = target / default_name(store, request.fmt)
    snapshot = take_snapshot(store)
    ctx.toast(f"Exporting {request.fmt} to {target}…", timeout=2)

    def work() -> int:
        copy = snapshot.open()
        try:
            return export_session(
                copy, target, request.fmt, leaf_id=leaf, branch_only=request.branch_only
            )
        finally:
            copy.close()

    try:
        size = await asyncio.to_thread(work)
    except OSError as exc:
        ctx.say(f"Could not export to {target}: {exc.strerror or exc}.", "error")
        return
    finally:
        snapshot.discard()
    ctx.say(f"Exported {request.fmt} to {target} ({size:,} bytes).")
