"""Command line: ``pitui`` (the TUI), ``pitui -p`` (print mode) and headless subcommands."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from pitui import __version__, collector
from pitui.cli.output import note
from pitui.errors import UserError


class _Parser(argparse.ArgumentParser):
    """Remembers its usage error, so ``-p ... --json`` can end its output with ``done``."""

    errors: list[str] = []  # noqa: RUF012 - shared by the subcommands' parsers

    def error(self, message: str) -> NoReturn:
        _Parser.errors.append(message)
        super().error(message)


def _wants_json_events(argv: Sequence[str]) -> bool:
    """Whether the command line asks for print mode with ``--json`` (before any ``--``)."""
    words = list(argv)
    if "--" in words:
        words = words[: words.index("--")]
    printing = any(w in ("-p", "--print") or w.startswith(("-p", "--print=")) for w in words)
    return printing and "--json" in words


class _NotPlain(Exception):
    """The command line is not a plain ``pitui [options]``: parse it with every command."""


class _OptionsOnly(_Parser):
    """The options without the subcommands, whose modules the TUI's start does not need
    (10-25 ms of imports before the first frame). Any doubt defers to the full parser."""

    def error(self, message: str) -> NoReturn:
        raise _NotPlain(message)


USAGE = """
  pitui [options]                 the TUI (no COMMAND)
  pitui -p PROMPT [options]       headless: the reply on stdout
  pitui [options] COMMAND [args]  inspect, export, compact, restore, configure"""


def build_parser(*, commands: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; ``commands=False`` leaves the subcommands out."""
    from pitui.cli.session_args import add_session_options

    parser = (_Parser if commands else _OptionsOnly)(
        prog="pitui",
        usage=USAGE,
        description="A terminal coding agent whose conversations are trees (pi session format v3).",
        epilog="Without a COMMAND, pitui opens the TUI in this directory, or with -p runs the "
        "agent headless. `pitui COMMAND --help` shows a command's own options. A session "
        "argument (FILE) is a session file or a session id prefix, as `pitui sessions` prints.",
    )
    parser.add_argument("--version", action="version", version=f"pitui {__version__}")
    parser.add_argument(
        "--session-dir",
        metavar="D",
        help="folder that directly holds the session files (overrides PITUI_SESSION_DIR and "
        "the sessionDir setting)",
    )
    parser.add_argument(
        "-p",
        "--print",
        dest="print_prompt",
        metavar="PROMPT",
        help="run the agent headless on PROMPT: the reply streams to stdout, tool activity "
        "to stderr; piped stdin comes before PROMPT in the message, and `-p -` reads the whole "
        "prompt from stdin",
    )
    parser.add_argument(
        "--json",
        dest="json_events",
        action="store_true",
        help="with -p: print one JSON event per line instead of text",
    )
    add_session_options(parser)
    parser.add_argument(
        "--approve",
        choices=["auto", "ask", "read-only"],
        help="approval mode for write, edit and bash: auto (run everything, as pi), ask "
        "(confirm each; -p refuses what it cannot ask about), read-only (refuse them); "
        "overrides the approval setting",
    )
    parser.add_argument("-r", "--resume", action="store_true", help="pick a session to open (TUI)")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="open a generated example session with an offline demo model (no API key needed)",
    )
    if not commands:
        parser.add_argument("command", nargs="?")  # set: not plain (see parse_command_line)
        return parser
    from pitui.cli import (
        checkpoint_cmds,
        compact_cmd,
        config_cmd,
        inspect_cmds,
        report_cmds,
        trust_cmd,
    )

    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", title="commands (optional)", prog="pitui"
    )
    inspect_cmds.register(sub)
    report_cmds.register(sub)
    compact_cmd.register(sub)
    trust_cmd.register(sub)
    config_cmd.register(sub)
    checkpoint_cmds.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code.

    Run as a program (``argv`` None), the TUI, print mode and the inspection commands leave with
    ``os._exit`` once their output is flushed and the session closed: the interpreter's final
    garbage collection of litellm's and Textual's objects takes seconds on a busy machine, and a
    SIGTERM must end pitui within a second. Commands the bash tool started are stopped first
    and its empty output folders removed (``os._exit`` skips ``atexit``).
    """
    for stream in (sys.stdout, sys.stderr):
        # Session text can hold lone surrogates or odd bytes: never crash while printing it.
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
    code = _main(argv)
    if argv is None and _FAST_EXIT:
        bash = sys.modules.get("pitui.agent.tools.bash")
        if bash is not None:
            bash.kill_running_commands()
            bash.remove_empty_output_dirs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    return code


_FAST_EXIT: list[bool] = []


def parse_command_line(argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed command line. ``pitui [options]`` (the TUI, print mode) is parsed without
    importing the subcommands; anything else (a command, help, an error) by the full parser,
    so its answers and messages are the same either way."""
    words = list(sys.argv[1:] if argv is None else argv)
    before = words[: words.index("--")] if "--" in words else words
    if not any(w in ("-h", "--help") for w in before):
        try:
            args, rest = build_parser(commands=False).parse_known_args(words)
        except _NotPlain:
            pass
        else:
            if args.command is None and not rest:
                return args
    return build_parser().parse_args(words)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = parse_command_line(argv)
    except SystemExit as exc:
        if (
            exc.code == 2
            and _Parser.errors
            and _wants_json_events(sys.argv[1:] if argv is None else argv)
        ):
            from pitui.cli.print_mode import JsonPrinter

            JsonPrinter(sys.stdout).fail("usage", _Parser.errors[-1])
        raise
    if args.command is None:
        _FAST_EXIT.append(True)  # the TUI and print mode (see main)
    if args.command is None and args.print_prompt is None:
        # No cyclic garbage collection until the TUI's first frame (pitui.cli.tui turns it
        # back on): start-up creates hundreds of thousands of objects and little garbage, and
        # the collector's passes over them cost the first frame ~70 ms at 20k entries.
        collector.pause(collector.STARTUP)
        from pitui.cli.tui import run_tui

        _FAST_EXIT.append(True)  # the app closes and flushes the session before it returns
        try:
            return run_tui(args)
        except UserError as exc:
            note(str(exc))
            return 2
        finally:
            collector.resume(collector.STARTUP)  # also when it ended before its first frame
    if getattr(args, "fast_exit", False):
        _FAST_EXIT.append(True)
    try:
        if args.command is None:
            from pitui.cli.print_mode import run_print

            return run_print(args)
        code: int = args.handler(args)
        return code
    except UserError as exc:
        note(str(exc))
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        log = log_internal_error(exc)
        where = f"; details in {log}" if log else ""
        note(f"internal error ({type(exc).__name__}: {exc}){where}")
        return 1


def log_internal_error(exc: BaseException) -> str | None:
    """Append the traceback to ``<state dir>/pitui.log``; returns its path (None if unwritable)."""
    import traceback
    from datetime import UTC, datetime

    from pitui.config import state_dir
    from pitui.private import ensure_private_folder, open_private_append

    try:
        folder = state_dir()
        ensure_private_folder(folder)
        path = folder / "pitui.log"
        with open(open_private_append(path), "a", encoding="utf-8") as f:
            f.write(f"--- {datetime.now(UTC).isoformat()} pitui {__version__}\n")
            f.write("".join(traceback.format_exception(exc)))
        return str(path)
    except OSError:
        return None
