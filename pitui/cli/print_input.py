"""The prompt of ``pitui -p``: the argument, piped stdin, or both.

- ``cat err.log | pitui -p "why?"``: stdin comes first, then a blank line, then the argument
  (pi 1.6 puts stdin first too, but glues the two together without any separator).
- ``pitui -p - < question.txt``: the prompt is stdin alone.
- A terminal on stdin is never read; nor is a stdin pitui cannot see (``stdin`` closed).
  Stdin that is empty or only whitespace counts as none.
- At most :data:`MAX_STDIN_BYTES` are read; more, or bytes that are not text (NUL), is a usage
  error with one sentence saying what to do.
- When a pipe stays silent for :data:`WAIT_NOTE_SECONDS`, a note on stderr says pitui is waiting
  for it (and how to skip it); pitui keeps waiting, as pi does.
"""

from __future__ import annotations

import contextlib
import os
import select
from typing import TextIO

from pitui.cli.errors import CliError
from pitui.cli.output import note

MAX_STDIN_BYTES = 4 * 1024 * 1024
"""More piped input than this (about a million tokens) is refused rather than sent."""
WAIT_NOTE_SECONDS = 3.0
STDIN_PROMPT = "-"
"""``-p -``: read the prompt from stdin."""
_CHUNK = 1 << 16


def _stdin_fd(stdin: TextIO | None) -> int | None:
    """The descriptor to read piped input from, or None (a terminal, closed, not a file)."""
    if stdin is None:
        return None
    try:
        fd = stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return None  # closed, or replaced by an object without a descriptor (pytest's capture)
    try:
        os.fstat(fd)
        if os.isatty(fd):
            return None
    except OSError:
        return None
    return fd


def _size_text(size: int) -> str:
    return f"{size // (1024 * 1024)} MB" if size >= 1024 * 1024 else f"{size // 1024} KB"


def read_piped(stdin: TextIO | None, err: TextIO) -> str | None:
    """Everything piped into ``stdin`` (stripped), or None for a terminal, nothing or blanks.

    Raises :class:`CliError` for input over :data:`MAX_STDIN_BYTES` or input that is not text.
    """
    fd = _stdin_fd(stdin)
    if fd is None:
        return None
    chunks: list[bytes] = []
    total = 0
    waited_note = False
    while True:
        if total == 0 and not waited_note:
            try:
                ready, _, _ = select.select([fd], [], [], WAIT_NOTE_SECONDS)
            except (OSError, ValueError):
                ready = [fd]
            if not ready:
                waited_note = True
                note(
                    "waiting for input on stdin (end it with Ctrl+D, or run with </dev/null "
                    "to send only the prompt)…",
                    err,
                )
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            with contextlib.suppress(OSError, ValueError):
                select.select([fd], [], [])
            continue
        except OSError as exc:
            raise CliError(f"Could not read stdin: {exc.strerror or exc}.") from None
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_STDIN_BYTES:
            raise CliError(
                f"stdin holds more than {_size_text(MAX_STDIN_BYTES)}, too much for one prompt: "
                "pipe in a part of it (for example `tail -n 200 err.log | pitui -p ...`) or "
                "save it to a file and ask about the file."
            )
        chunks.append(chunk)
    data = b"".join(chunks)
    if b"\0" in data:
        raise CliError(
            "stdin is not text (it holds NUL bytes): pipe in text, or save the data to a "
            "file and ask about the file."
        )
    text = data.decode("utf-8", "replace").strip()
    return text or None


def print_prompt(argument: str, stdin: TextIO | None, err: TextIO) -> str:
    """The prompt ``-p ARGUMENT`` sends, with piped stdin (see the module docstring)."""
    if argument == STDIN_PROMPT:
        if _stdin_fd(stdin) is None:
            raise CliError(
                "`-p -` reads the prompt from stdin, but stdin is a terminal: pipe the prompt "
                "in (`echo 'fix the tests' | pitui -p -`) or give it as the argument."
            )
        piped = read_piped(stdin, err)
        if piped is None:
            raise CliError("`-p -` read no prompt from stdin: it was empty.")
        return piped
    piped = read_piped(stdin, err)
    if piped is None:
        return argument
    return f"{piped}\n\n{argument}" if argument.strip() else piped
