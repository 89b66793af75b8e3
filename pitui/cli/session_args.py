"""Which session a run uses: ``--session FILE|ID-prefix``, ``--continue``, ``--no-session``.

Shared by print mode and the TUI. Errors are :class:`CliError` (exit code 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pitui.cli.errors import CliError
from pitui.config import Settings, resolve_session_folder, sessions_root
from pitui.session import SessionFileError, SessionStore
from pitui.session.listing import find_most_recent, list_sessions


def add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", metavar="M", help="litellm model, e.g. anthropic/claude-sonnet-4-5"
    )
    parser.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible server")
    parser.add_argument(
        "--thinking",
        metavar="L",
        choices=["off", "minimal", "low", "medium", "high"],
        help="thinking level: off, minimal, low, medium, high",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--session",
        metavar="FILE|ID",
        help="session file (a missing path starts a new session there) or session id prefix",
    )
    group.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the latest session of this directory",
    )
    group.add_argument("--no-session", action="store_true", help="keep the session in memory only")


def _looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.endswith(".jsonl")


def session_folder(args: argparse.Namespace, cwd: str, settings: Settings) -> Path:
    folder, _ = resolve_session_folder(cwd, args.session_dir, settings.session_dir)
    return folder


def find_by_prefix(prefix: str, folder: Path, cwd: str) -> Path:
    """A session whose id starts with ``prefix``: this directory's first, then all."""
    here = [i for i in list_sessions([folder], cwd=cwd) if i.id.startswith(prefix)]
    exact = [i for i in here if i.id == prefix]
    candidates = exact or here
    if not candidates:
        root = sessions_root()
        folders = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
        if folder not in folders:
            folders.append(folder)
        candidates = [i for i in list_sessions(folders) if i.id.startswith(prefix)]
    if not candidates:
        raise CliError(f"No session id starts with {prefix!r}.")
    if len(candidates) > 1:
        listed = "; ".join(f"{i.id} ({i.path})" for i in candidates[:10])
        raise CliError(f"Session id prefix {prefix!r} is ambiguous: {listed}.")
    return Path(candidates[0].path)


def open_session(
    args: argparse.Namespace, cwd: str, settings: Settings, *, allow_read_only: bool = False
) -> SessionStore:
    """The store a run writes to. Refuses (CliError) a session that cannot be written (another
    process has it open, the disk is full), unless ``allow_read_only`` (the TUI shows it
    read-only with a notice)."""
    folder = session_folder(args, cwd, settings)
    try:
        if args.no_session:
            return SessionStore.in_memory(cwd)
        if args.session:
            if _looks_like_path(args.session):
                path = Path(args.session).expanduser()
                store = SessionStore.open_or_create(path, cwd, folder=path.absolute().parent)
            else:
                store = SessionStore.open(find_by_prefix(args.session, folder, cwd))
        elif args.continue_:
            latest = find_most_recent(folder, cwd)
            store = (
                SessionStore.open(latest, folder=folder)
                if latest is not None
                else SessionStore.create(folder, cwd)
            )
        else:
            store = SessionStore.create(folder, cwd)
    except SessionFileError as exc:
        raise CliError(str(exc)) from None
    if store.read_only and not allow_read_only:
        reason = store.read_only_reason or "it is open elsewhere"
        store.close()
        raise CliError(f"Cannot write to this session: {reason}")
    return store
