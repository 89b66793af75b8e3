"""Durable writes: a file's new content replaces the old one all at once and survives a crash.

:func:`replace_atomically` is how pitui replaces a file, whoever asks (the write and edit tools,
session migration, the trust list, checkpoints' own files, exports). The new bytes go to a temp
file in the file's own folder (a rename is atomic only within one file system), which is
written in full, given its mode, fsynced and renamed over the file; then the folder is fsynced,
so the rename itself is on disk. A kill, a full disk or a power cut at any moment leaves either
the old content or the new one, never a truncated or mixed file. On failure the temp file is
removed; a temp file a killed pitui left (``.NAME.PID-RANDOM.pitui-tmp``) is removed by the next
write of that file, and by the next file checkpoint of a project folder.

What differs between callers on purpose is a parameter of :func:`replace_atomically` (the mode,
whether both fsyncs happen, a backup of the replaced file, a step before the rename); why each
caller chooses what it does is said there.

Pure: stdlib only, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# ----------------------------------------------------------------------------- bytes to disk


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than it is given)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "short write")
        view = view[written:]


def fsync_folder(folder: Path) -> None:
    """Make the names in ``folder`` durable (a rename, a new file) after the files' own fsync.

    Errors are ignored: some file systems cannot fsync a folder, and the data itself is synced
    already; the worst a failure costs is the rename after a power cut."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_in_place(path: Path, data: bytes) -> None:
    """Truncate ``path`` and write ``data`` into the same file, then fsync it. Not atomic (a crash
    half way leaves half the data): only for files a rename must not replace (see
    :mod:`pitui.agent.tools.replace`)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, for a moment, for
    every thread); 0o022 where ``/proc`` cannot tell."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


# ----------------------------------------------------------------------------- the temp files

TEMP_SUFFIX = ".pitui-tmp"
"""The temp file of an atomic write is named ``.NAME.PID-RANDOM.pitui-tmp`` beside the file it
replaces (``.NAME.RANDOM.pitui-tmp`` before the process id was in the name)."""
STALE_UNNAMED_SECONDS = 600.0
"""A temp file without a process id is left over once untouched this long."""
STALE_REUSED_SECONDS = 3600.0
"""A temp file whose process id runs again (reused, or another machine's) after this long."""


def short_name(name: str) -> str:
    """At most 80 bytes of ``name`` (a temp file's name must fit the 255-byte limit)."""
    return os.fsdecode(os.fsencode(name)[:80]).encode("utf-8", "ignore").decode("utf-8", "ignore")


def temp_prefix(name: str) -> str:
    """The start of an atomic write's temp name for a file named ``name`` (mkstemp adds the
    random part and :data:`TEMP_SUFFIX`)."""
    return f".{short_name(name)}.{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists (another user's)
    return True


def is_stale_temp(name: str | bytes, info: os.stat_result, now: float | None = None) -> bool:
    """Is ``name`` (a file's name, with ``info`` its ``lstat``) an atomic write's temp file
    that its writer left behind (killed mid-write)? A temp file of a running pitui is not."""
    text = os.fsdecode(name)
    if not (text.startswith(".") and text.endswith(TEMP_SUFFIX)) or not stat.S_ISREG(info.st_mode):
        return False
    token = text[: -len(TEMP_SUFFIX)].rpartition(".")[2]
    age = (now if now is not None else time.time()) - info.st_mtime
    pid_text, dash, _ = token.partition("-")
    if not dash or not pid_text.isdigit():
        return age > STALE_UNNAMED_SECONDS
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    return not _pid_alive(pid) or age > STALE_REUSED_SECONDS


def remove_stale_temps(folder: Path, name: str | None = None) -> list[Path]:
    """Remove the atomic writes' temp files left behind in ``folder`` (only those of files
    named ``name``, when given); returns what was removed. Errors are ignored."""
    start = f".{name}." if name is not None else "."
    removed = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not (entry.name.startswith(start) and entry.name.endswith(TEMP_SUFFIX)):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                    if is_stale_temp(entry.name, info):
                        os.unlink(entry.path)
                        removed.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        pass
    return removed


# ----------------------------------------------------------------------------- replacing a file


class FolderClosedError(PermissionError):
    """The temp file could not be created: pitui may not create files in the folder (nothing
    was written). A ``PermissionError``, so callers that do not care see one."""


def _keep_backup(path: Path, backup: Path) -> None:
    """``backup`` becomes the file at ``path`` (mode 0600): a second name for the same file when
    the file system allows (the rename that follows leaves the old file only there), else a
    synced copy."""
    try:
        os.link(path, backup)
        os.chmod(backup, 0o600)
        return
    except OSError:
        pass
    fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with open(path, "rb") as source, os.fdopen(fd, "wb") as copy:
        while chunk := source.read(1 << 20):
            copy.write(chunk)
        copy.flush()
        os.fsync(copy.fileno())


def replace_atomically(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    durable: bool = True,
    backup: Path | None = None,
    before_rename: Callable[[Path], None] | None = None,
) -> None:
    """Make ``data`` the content of ``path`` all at once (see the module docstring). ``path`` is
    replaced as a name: a symlink there becomes a regular file (a caller that writes through
    links resolves the link first, as the write tool does).

    ``mode``
        ``None``: the replaced file's permissions (and owner, where the process may give a file
        away) stay, and a new file gets ``0666`` minus the umask, as ``open()`` would: for files
        that belong to the project or its tools (the write and edit tools, checkpoints' own
        files). A number: exactly that mode, whatever the umask or the old file had: ``0o600``
        for what only the user may read (a migrated session, the trust list, an export).
    ``durable``
        ``True`` (the default): fsync the file before the rename and the folder after it, so
        the new content survives a power cut. ``False`` skips both (readers still see the old
        or the new content, never half): only for files that are cheap to lose and written
        often, such as a checkpoint store's last commit, churn numbers and excludes, which are
        rebuilt or recounted when lost.
    ``backup``
        Keep the file being replaced under this name, unless a file with that name exists (the
        first, original file is the one worth keeping): session migration keeps the pi v1/v2
        file as ``.bak``. Mode 0600, synced when it had to be copied.
    ``before_rename``
        Called with the temp file's path once it is complete (and synced), just before the
        rename. The session opens and ``flock``s it there: its single writer's lock moves with
        the file, so there is no moment where the new file is unlocked.

    Raises ``OSError`` (:class:`FolderClosedError` when the temp file could not be created);
    the old content is then intact and no temp file is left.
    """
    folder = path.parent
    try:
        old: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        old = None
    # What a write of this file that was killed half way left here goes first.
    remove_stale_temps(folder, short_name(path.name))
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=temp_prefix(path.name), suffix=TEMP_SUFFIX, dir=folder
        )
    except PermissionError as exc:
        raise FolderClosedError(exc.errno, exc.strerror, exc.filename) from None
    tmp = Path(tmp_name)
    try:
        try:
            write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            elif old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                    with contextlib.suppress(OSError):  # only root may give a file away
                        os.fchown(fd, old.st_uid, old.st_gid)
            else:
                os.fchmod(fd, 0o666 & ~_umask())
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if before_rename is not None:
            before_rename(tmp)
        if backup is not None and old is not None and not backup.exists():
            _keep_backup(path, backup)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if durable:
        fsync_folder(folder)
