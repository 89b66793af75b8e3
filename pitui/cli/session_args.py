"""Which session a run uses (``--session FILE|ID-prefix``, ``--continue``, ``--fork``,
``--no-session``) and where it works (``--cwd``).

Shared by print mode and the TUI. Errors are :class:`CliError` (exit code 2).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

from pitui.cli.errors import CliError
from pitui.config import Settings, resolve_session_folder, sessions_root
from pitui.session import SessionFileError, SessionStore, fork_from
from pitui.session.listing import SessionInfo, find_most_recent, list_sessions


def add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        metavar="M",
        help="provider/model, e.g. anthropic/claude-sonnet-4-5, openai/gpt-5, gemini/"
        "gemini-2.5-pro, ollama/qwen3 (litellm's provider names; pi's work too)",
    )
    parser.add_argument(
        "--api-base",
        metavar="URL",
        help="base URL of the model's API, for any provider (a proxy, a local server, an "
        "OpenAI-compatible server); it belongs to the --model given with it",
    )
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
    group.add_argument(
        "--fork",
        metavar="FILE|ID",
        help="continue a copy of a session (every branch, a new id) working in this directory",
    )
    group.add_argument("--no-session", action="store_true", help="keep the session in memory only")
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="work in DIR: the tools run there, also for a resumed session whose own directory "
        "is gone (the session file keeps its directory); default: this directory",
    )


def run_cwd(args: argparse.Namespace) -> str:
    """The directory this run belongs to: ``--cwd DIR`` (it must exist) or the process's."""
    value = getattr(args, "cwd", None)
    if not value:
        return os.getcwd()
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.isdir(path):
        raise CliError(f"--cwd {value}: there is no such directory.")
    return path


def work_dir(
    args: argparse.Namespace, store: SessionStore, cwd: str, *, ask: bool = False
) -> str | None:
    """Where the tools work: ``cwd`` with ``--cwd``, else the session's own directory. A saved
    session whose directory no longer exists gives None when ``ask`` (the TUI asks), else a
    CliError saying what to do; the tools never re-create that directory."""
    if getattr(args, "cwd", None):
        return cwd
    if store.stored_cwd_missing:
        if ask:
            return None
        ref = store.path or args.session
        raise CliError(
            f"The session's working directory {store.cwd} no longer exists: add --cwd . to "
            f"work here, or use --fork {ref} to continue a copy of it here."
        )
    return store.cwd or cwd


def read_only_refusal(store: SessionStore, *, can_fork: bool = True) -> str:
    """One sentence for a run that needs to write a session it cannot write (``can_fork``:
    the command takes ``--fork``)."""
    if store.held_elsewhere and can_fork:
        return (
            f"This session is open in another pitui ({store.holder}): use --fork {store.path} "
            "to continue a copy of it here."
        )
    if store.held_elsewhere:
        return (
            f"This session is open in another pitui ({store.holder}): quit it there first, "
            "then run this again."
        )
    return f"Cannot write to this session: {store.read_only_reason or 'it is open elsewhere.'}"


def _looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.endswith(".jsonl")


def session_folder(args: argparse.Namespace, cwd: str, settings: Settings) -> Path:
    folder, _ = resolve_session_folder(cwd, args.session_dir, settings.session_dir)
    return folder


def find_by_prefix(prefix: str, folder: Path, cwd: str) -> Path:
    """The session whose id starts with ``prefix``, looked for in widening circles: this
    directory's sessions in ``folder``, then every session in ``folder``, then every session
    pitui keeps. The first circle with a match decides; an exact id wins over longer ones."""

    def circles() -> Iterator[list[SessionInfo]]:
        yield list_sessions([folder], cwd=cwd)
        yield list_sessions([folder])
        root = sessions_root()
        others = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
        yield list_sessions(p for p in others if p != folder)

    for infos in circles():
        found = [i for i in infos if i.id.startswith(prefix)]
        exact = [i for i in found if i.id == prefix]
        candidates = exact or found
        if len(candidates) == 1:
            return Path(candidates[0].path)
        if len(candidates) > 1:
            listed = "; ".join(f"{i.id} ({i.path})" for i in candidates[:10])
            more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
            raise CliError(
                f"Session id prefix {prefix!r} is ambiguous: {listed}{more}. Give more of the id."
            )
    raise CliError(
        f"No session file {prefix!r} and no session id starts with it (looked in {folder} "
        "and every session folder); `pitui sessions --all` lists the sessions and their ids."
    )


def session_file(args: argparse.Namespace, value: str | None = None) -> str:
    """The session file a command names (``value``, default ``args.file``): a path to a file,
    or a session id prefix as ``pitui sessions`` prints it (resolved as ``--session`` is)."""
    ref = value if value is not None else args.file
    path = Path(ref).expanduser()
    if _looks_like_path(ref) or path.exists():
        return ref
    from pitui.config import load_settings

    cwd = run_cwd(args)
    return str(find_by_prefix(ref, session_folder(args, cwd, load_settings(cwd)), cwd))


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
        if getattr(args, "fork", None):
            source = _open_existing(args.fork, folder, cwd)
            try:
                store = fork_from(source, cwd, folder)
            finally:
                source.close()
        elif args.session:
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
        refusal = read_only_refusal(store)
        store.close()
        raise CliError(refusal)
    return store


def _open_existing(ref: str, folder: Path, cwd: str) -> SessionStore:
    """The session ``ref`` (a path or an id prefix), read-only: a source to copy from."""
    path = Path(ref).expanduser() if _looks_like_path(ref) else find_by_prefix(ref, folder, cwd)
    return SessionStore.open(path, read_only=True)
