"""``pitui checkpoints FILE`` and ``pitui restore FILE --leaf ID [--dry-run]``.

Headless: no Textual, no litellm (the heavy imports happen inside the handlers, and these
handlers need neither).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from pitui.cli.errors import CliError
from pitui.cli.inspect_cmds import SESSION_HELP
from pitui.cli.session_args import session_file

STATUS_MARK = {"A": "A", "M": "M", "D": "D"}
REASON_WORDS = {
    "before-change": "before changes",
    "after-run": "after run",
    "outside": "outside pitui",
    "before-restore": "before restore",
}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "checkpoints",
        help="list a session's file checkpoints with the files each changed",
        description="Every pitui.checkpoint entry of the session, in file order: when, why "
        "(before a run's first change, after a run, before a restore), where in the tree, "
        "and the files changed since the previous checkpoint. • marks the active path.",
    )
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object per checkpoint")
    p.set_defaults(handler=cmd_checkpoints, fast_exit=True)

    p = sub.add_parser(
        "restore",
        help="restore the session's folder to the files at an entry (and move the leaf there)",
        description="Saves the folder as it is (a checkpoint at the current leaf, so restoring "
        "the old leaf brings it back), then makes it what it was at ID, all or nothing, and "
        "moves the session's leaf to ID. Files changed outside pitui since the last checkpoint "
        "stop the restore unless --force or --keep-outside is given.",
    )
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument("--leaf", metavar="ID", required=True, help="entry id (or unique prefix)")
    p.add_argument("--dry-run", action="store_true", help="only list what would change")
    p.add_argument("--diff", action="store_true", help="with the list, print each file's diff")
    p.add_argument(
        "--force",
        action="store_true",
        help="also overwrite files changed outside pitui (they are saved first)",
    )
    p.add_argument(
        "--keep-outside",
        action="store_true",
        help="leave files changed outside pitui as they are; restore the rest",
    )
    p.add_argument(
        "--files-only", action="store_true", help="restore the files but leave the leaf where it is"
    )
    p.set_defaults(handler=cmd_restore)


def _clean(text: str) -> str:
    from pitui.text import strip_escapes

    return strip_escapes(text).replace("\n", " ")


def _when(timestamp: Any) -> str:
    return str(timestamp or "")[:16].replace("T", " ")


def cmd_checkpoints(args: argparse.Namespace) -> int:
    from pitui.checkpoint.record import CheckpointIndex
    from pitui.checkpoint.settings import CheckpointSettings, workspace_settings_for
    from pitui.checkpoint.store import open_store_or_reason, size_text
    from pitui.cli.inspect_cmds import open_for_reading
    from pitui.config import state_dir
    from pitui.session.codec import dumps_line
    from pitui.session.oneline import entry_text

    args.file = session_file(args)
    store = open_for_reading(args.file)
    try:
        index = CheckpointIndex(store)
        refs = index.all()
        settings = (
            workspace_settings_for(store.cwd).checkpoint if store.cwd else CheckpointSettings()
        )
        missing: set[str] = set()
        note = ""
        size_line = ""
        if refs:
            cp_store, reason = open_store_or_reason(
                store.cwd, settings, state_dir() / "checkpoints"
            )
            if cp_store is None:
                note = reason or ""
                missing = {r.commit for r in refs}
            else:
                missing = cp_store.missing(r.commit for r in refs)
                size_line = (
                    f"  (the folder's checkpoint store: {size_text(cp_store.size_bytes())} of "
                    f"{size_text(settings.max_store_bytes)} (checkpoint.maxStoreMB), in "
                    f"{_clean(str(cp_store.folder))})"
                )
        path_ids = {n.id for n in store.path_to()}
        if args.json:
            for ref in refs:
                entry = store.get(ref.entry_id)
                row = {
                    "entryId": ref.entry_id,
                    "parentId": ref.parent_id,
                    "timestamp": entry.get("timestamp"),
                    "onPath": ref.entry_id in path_ids,
                    "available": ref.commit not in missing,
                    **ref.data,
                }
                sys.stdout.buffer.write(dumps_line(row))
            sys.stdout.flush()
            return 0
        if not refs:
            print(f"No file checkpoints in {args.file}.")
            return 0
        print(f"File checkpoints of {args.file} (folder {_clean(store.cwd)}):")
        if note:
            print(f"  ({note})")
        if size_line:
            print(size_line)
        for ref in refs:
            entry = store.get(ref.entry_id)
            marker = "•" if ref.entry_id in path_ids else " "
            counts = ref.data.get("counts") or {}
            parts = [f"{n} {w}" for w, n in counts.items() if isinstance(n, int) and n]
            changed = f"{ref.changed_count} file(s): {', '.join(parts)}" if parts else "no changes"
            at = ""
            if ref.parent_id is not None and ref.parent_id in store:
                at = f"  at {ref.parent_id} {_clean(entry_text(store.get(ref.parent_id)))[:50]}"
            gone = "  (pruned)" if ref.commit in missing else ""
            reason = REASON_WORDS.get(ref.reason, ref.reason)
            print(
                f"{marker} {ref.entry_id}  {_when(entry.get('timestamp'))}  {reason:<15} "
                f"{changed}{gone}{at}"
            )
            listed = ref.data.get("changes") or []
            for change in listed[:20]:
                if isinstance(change, dict):
                    print(f"      {change.get('status', '?')} {_clean(str(change.get('path')))}")
            more = len(listed) - 20 + int(ref.data.get("more") or 0)
            if more > 0:
                print(f"      … {more} more")
            for skipped in (ref.data.get("skipped") or [])[:5]:
                if isinstance(skipped, dict):
                    print(
                        f"      (not saved: {_clean(str(skipped.get('path')))}, "
                        f"{_clean(str(skipped.get('reason')))})"
                    )
        return 0
    finally:
        store.close()


def print_plan(move: Any, *, show_diff: bool, out: Any = None) -> None:
    """The changes a restore makes (or would make), one file a line."""
    from pitui.checkpoint.diff import summary_text

    out = out or sys.stdout
    plan = move.plan
    outside = set(plan.outside)
    out.write(f"{summary_text(plan.changes)}:\n" if plan.changes else "No file changes.\n")
    by_path = {d.change.path: d for d in move.diffs}
    for change in plan.changes:
        flag = (
            "  (changed outside pitui since the last checkpoint)" if change.path in outside else ""
        )
        diff = by_path.get(change.path)
        stats = f"  +{diff.added} -{diff.removed}" if diff and (diff.added or diff.removed) else ""
        note = f"  [{diff.note}]" if diff and diff.note else ""
        out.write(f"  {STATUS_MARK[change.status]} {_clean(change.path)}{stats}{note}{flag}\n")
        if show_diff and diff is not None:
            for line in diff.lines:
                out.write(f"      {_clean(line)}\n")
    for kept in plan.kept:
        out.write(f"  kept {_clean(kept.path)}: {kept.reason}\n")
    if plan.not_restorable:
        out.write(f"Not restorable, left as they are ({len(plan.not_restorable)}):\n")
        for kept in plan.not_restorable:
            out.write(f"  {_clean(kept.path)}: {_clean(kept.reason)}\n")


def cmd_restore(args: argparse.Namespace) -> int:
    from pitui.agent.workspace import Workspace
    from pitui.checkpoint.settings import workspace_settings_for
    from pitui.cli.inspect_cmds import resolve_entry_id
    from pitui.cli.output import note
    from pitui.session import SessionFileError, SessionStore

    if args.force and args.keep_outside:
        raise CliError("Give --force or --keep-outside, not both.")
    args.file = session_file(args)
    try:
        store = SessionStore.open(args.file, read_only=args.dry_run)
    except SessionFileError as exc:
        raise CliError(str(exc)) from None
    try:
        if store.read_only and not args.dry_run:
            raise CliError(
                f"Cannot restore from this session: {store.read_only_reason or 'it is read-only'}"
            )
        leaf = resolve_entry_id(store, args.leaf)
        if not store.cwd:
            raise CliError("The session does not record its folder (cwd), so nothing to restore.")
        settings = workspace_settings_for(store.cwd)
        for line in settings.notes:
            note(f"warning: {line}", sys.stderr)
        workspace = Workspace(settings.without_notes(), store.cwd, interactive=False)
        workspace.attach_store(store)
        return asyncio.run(_restore(args, store, workspace, leaf))
    finally:
        store.close()


async def _restore(args: argparse.Namespace, store: Any, workspace: Any, leaf: str) -> int:
    from pitui.checkpoint.restore import RestoreRefused

    move = await workspace.preview_move(leaf)
    if move.state is None:
        raise CliError(f"No checkpoint records the files at {leaf}: {move.note}")
    if move.plan is None:
        raise CliError(move.note or "File checkpoints are off.")
    if move.note:
        print(f"note: {move.note}")
    print_plan(move, show_diff=args.diff)
    if args.dry_run:
        return 0
    old_leaf = store.leaf_id
    if not move.differs:
        if not args.files_only and leaf != old_leaf:
            store.branch(leaf)
            print(f"The files already match {leaf}; the leaf moved there.")
        else:
            print(f"The files already match {leaf}.")
        return 0
    if move.plan.outside and not (args.force or args.keep_outside):
        raise CliError(
            f"{len(move.plan.outside)} file(s) changed outside pitui since the last checkpoint; "
            "nothing was restored. Pass --force to overwrite them (they are saved first) or "
            "--keep-outside to leave them."
        )
    saved = await workspace.save_before_restore(move)
    outside = "overwrite" if args.force else "keep" if args.keep_outside else "refuse"
    try:
        result = await workspace.restore_files(move, outside)
    except RestoreRefused as exc:
        raise CliError(str(exc)) from None
    if not args.files_only:
        store.branch(leaf)
    where = f" and moved the leaf to {leaf}" if not args.files_only else ""
    print(f"Restored {len(result.written)} file(s) and deleted {len(result.deleted)}{where}.")
    if saved is not None and old_leaf is not None:
        print(
            f"The files from before are saved (checkpoint {saved.entry_id}); "
            f"`pitui restore {args.file} --leaf {old_leaf}` brings them back."
        )
    return 0
