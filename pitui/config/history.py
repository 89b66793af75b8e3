"""The prompt history of a project: what was sent from the editor in this folder, kept across
sessions.

One file per working directory in ``<state dir>/prompt-history/`` (named like pi's session
folders, ``--home-me-app--.jsonl``; a hash when that name would be too long), mode 0600 in a
0700 folder: prompts can quote secrets, so nobody else on the machine may read them. Each line
is one prompt as a JSON string, newest last; a prompt equal to the one before it is not added
again. The file is bounded: past :data:`MAX_ENTRIES` prompts (or :data:`MAX_BYTES`) it is
rewritten with the newest ones only (atomically: a temp file, then a rename), and a prompt
longer than :data:`MAX_PROMPT_CHARS` is not kept at all. An unreadable line is skipped; an
unreadable file is an empty history.

Reading and writing touch the disk: call them from a thread, never the event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

from pitui.config.paths import encode_cwd, state_dir
from pitui.private import FILE_MODE, ensure_private_folder, open_private_append

MAX_ENTRIES = 1000
"""Prompts kept per project (the oldest go first)."""
MAX_BYTES = 4 * 1024 * 1024
"""The file is rewritten with fewer prompts when it grows past this."""
MAX_PROMPT_CHARS = 100_000
"""A longer prompt (a pasted log) is not kept."""
FOLDER = "prompt-history"
_NAME_LIMIT = 200
_TAIL = 64 * 1024  # what is read of the file's end to find its newest prompt
_WRITING = threading.RLock()  # one append (or rewrite) at a time in this process


def history_file(cwd: str | os.PathLike[str], root: Path | None = None) -> Path:
    """The history file of the working directory ``cwd``."""
    key = str(Path(cwd).expanduser().resolve())
    name = encode_cwd(key)
    if len(name) > _NAME_LIMIT:
        name = "h-" + hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return (root or state_dir() / FOLDER) / f"{name}.jsonl"


class PromptHistory:
    """The prompt history file of one project (see the module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_project(cls, cwd: str | os.PathLike[str], root: Path | None = None) -> PromptHistory:
        return cls(history_file(cwd, root))

    def load(self) -> list[str]:
        """The prompts, oldest first (at most :data:`MAX_ENTRIES`). A file that grew well past
        the bound is rewritten with the newest ones."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return []
        out: list[str] = []
        lines = data.splitlines()
        for line in lines:
            try:
                text = json.loads(line)
            except ValueError:
                continue
            if isinstance(text, str) and text.strip() and (not out or out[-1] != text):
                out.append(text)
        if len(lines) > MAX_ENTRIES + MAX_ENTRIES // 5:
            # Grown past its bound (appends since the last start): keep the newest.
            with _WRITING, contextlib.suppress(OSError):
                self._rewrite(out)
        return out[-MAX_ENTRIES:]

    def add(self, text: str) -> bool:
        """Append ``text`` (stripped) unless it is empty, too long, or the newest prompt already;
        True when it was written. Errors (a read-only state folder) are left to the caller."""
        text = text.strip()
        if not text or len(text) > MAX_PROMPT_CHARS:
            return False
        with _WRITING:
            return self._append(text)

    def _append(self, text: str) -> bool:
        if self._last() == text:
            return False
        ensure_private_folder(self.path.parent)
        line = (json.dumps(text) + "\n").encode("ascii")
        fd = open_private_append(self.path)
        try:
            os.write(fd, line)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            self._rewrite(self.load())
        return True

    def _last(self) -> str | None:
        """The newest prompt in the file (reads only its end)."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - _TAIL))
                tail = handle.read()
        except OSError:
            return None
        lines = tail.splitlines()
        if len(tail) == _TAIL and lines:
            lines = lines[1:]  # the first one may be cut
        for line in reversed(lines):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, str):
                return value
        return None

    def _rewrite(self, texts: list[str]) -> None:
        """Keep the newest of ``texts`` that fit both bounds (temp file, then rename)."""
        kept: list[bytes] = []
        size = 0
        for text in reversed(texts):
            line = (json.dumps(text) + "\n").encode("ascii")
            if len(kept) >= MAX_ENTRIES or size + len(line) > MAX_BYTES // 2:
                break
            kept.append(line)
            size += len(line)
        kept.reverse()
        fd, tmp = tempfile.mkstemp(prefix=".history.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                os.chmod(tmp, FILE_MODE)
                handle.write(b"".join(kept))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def merge_history(saved: list[str], session: list[str]) -> list[str]:
    """The editor's history: the project's saved prompts, after the prompts of the open
    session that the file does not have (a session pi wrote, or one from before the file)."""
    known = set(saved)
    earlier = [text for text in session if text.strip() not in known]
    return earlier + saved
