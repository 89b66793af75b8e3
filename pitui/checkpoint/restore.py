"""Restoring the folder to a checkpoint: all or nothing, and nothing unsaved is ever touched.

The steps, under the store's lock:

1. **Save what is there.** The folder is captured first (the *pre-restore checkpoint*), so every
   file the restore will overwrite or delete can be brought back (redo is one more restore).
2. **Plan.** The changes from that capture to the target. A path is left alone and listed as
   *not restorable* when the restore could only destroy it: what is on disk there is not in
   the pre-restore checkpoint (an ignored file, one too large to save, a binary that churns, a
   folder holding such files, anything inside a nested repository or submodule), or the target
   never saved it (it was too large, churning or inside a nested repository then, or the
   target's ignore rules leave it out): a checkpoint that did not save a path says nothing
   about it, so the restore neither deletes nor overwrites it. Unless the caller says
   otherwise, a path that changed outside pitui since the last checkpoint is left too.
3. **Stage.** Every new file and symlink is written, with its mode, into a staging folder on
   the same filesystem (in the store when it shares the folder's device), and synced.
4. **Journal.** The list of operations is written atomically to ``journal.json`` and synced.
   From here on the restore will complete.
5. **Apply.** Deletions, empty folders removed, folders created, staged files renamed over their
   targets (each rename is atomic). Then the journal goes.

A kill -9 before step 4 leaves the folder as it was (staging lies outside it, or in a hidden
``.pitui-staging-*`` folder when it must be on another device); after it, the next pitui that
opens the store (any capture, restore, or start in that folder) first saves the folder as it
is, then replays the journal, which is idempotent. Either way the folder ends in the old or the
new state, never a mix.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pitui.checkpoint.git import GitFailed
from pitui.checkpoint.store import NESTED_REPOSITORY, Capture, Change, write_atomic
from pitui.durable import fsync_folder, write_all
from pitui.errors import UserError

if TYPE_CHECKING:
    from pitui.checkpoint.store import CheckpointStore

log = logging.getLogger(__name__)

JOURNAL = "journal.json"
OutsidePolicy = Literal["refuse", "overwrite", "keep"]


class RestoreRefused(UserError):
    """The restore would overwrite files changed outside pitui (or the files moved meanwhile)."""

    def __init__(self, message: str, paths: list[str] | None = None) -> None:
        super().__init__(message)
        self.paths = paths or []


class RestoreFailed(UserError):
    """The restore could not be done (a full disk…); the message says whether the folder
    changed (it did not, unless the apply phase itself failed: the next open finishes it)."""


def _failed(exc: BaseException, what: str = "") -> RestoreFailed:
    from pitui.checkpoint.store import failure_reason

    reason = failure_reason(exc)
    hint = " (free some space and try again)" if reason == "the disk is full" else ""
    return RestoreFailed(f"The files were not restored: {what}{reason}; nothing was changed{hint}.")


@dataclass(frozen=True)
class Kept:
    """A path the restore leaves as it is, and why. ``differs``: it differs from the target
    (else it is only listed: a file the target left out, on disk now)."""

    path: str
    reason: str
    differs: bool = True


@dataclass
class RestorePlan:
    """What restoring to ``target`` would change, from the folder as captured in ``pre``."""

    target: str
    pre: Capture
    changes: list[Change] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    """Paths left as they are by choice (changed outside pitui, with ``outside="keep"``)."""
    not_restorable: list[Kept] = field(default_factory=list)
    """Paths left as they are because a restore could only destroy them (see the module)."""
    outside: list[str] = field(default_factory=list)
    """Paths among ``changes`` that changed outside pitui since the baseline checkpoint."""

    @property
    def empty(self) -> bool:
        return not self.changes


@dataclass
class RestoreResult:
    plan: RestorePlan
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    """Every path left as it was: kept by choice, and not restorable."""


# ---------------------------------------------------------------------------- planning


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _safe(path: str) -> bool:
    parts = path.split("/")
    return (
        bool(path)
        and not path.startswith("/")
        and all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)
    )


def _blocked(store: CheckpointStore, change: Change, deleted: set[str]) -> str | None:
    """Why a write to ``change.path`` must not happen (None: it may)."""
    root = store.project
    parts = change.path.split("/")
    for i in range(1, len(parts)):
        prefix = "/".join(parts[:i])
        st = _lstat(root / prefix)
        if st is None:
            break
        if stat.S_ISDIR(st.st_mode):
            continue
        if prefix not in deleted:
            return f"{prefix} is in the way and is not saved in checkpoints"
    target = root / change.path
    st = _lstat(target)
    if st is None:
        return None
    if stat.S_ISDIR(st.st_mode):
        for dirpath, dirnames, filenames in os.walk(target):
            for name in filenames + [
                d for d in dirnames if os.path.islink(os.path.join(dirpath, d))
            ]:
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                if rel not in deleted:
                    return "a folder holding files checkpoints do not save is in the way"
        return None
    if change.status == "A":
        return "the file on disk is not saved in checkpoints (ignored or too large)"
    return None


def _left_out_at(path: str, left_out: dict[str, str]) -> str | None:
    """Why ``path`` (or a folder holding it) was left out by a checkpoint (None: it was not)."""
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        reason = left_out.get("/".join(parts[:i]))
        if reason is not None:
            return reason
    return None


def _not_saved(reason: str) -> str:
    return reason.removesuffix(" (not saved)")


def plan_restore(
    store: CheckpointStore,
    target: str,
    pre: Capture,
    *,
    baseline: str | None = None,
    outside: OutsidePolicy = "refuse",
    target_skipped: Mapping[str, str] | None = None,
) -> RestorePlan:
    """The changes from ``pre`` (the folder now) to checkpoint ``target``.

    ``baseline`` is the checkpoint the folder should be at (the current leaf's): paths that
    differ between it and ``pre`` changed outside pitui, and are listed in ``outside``; with
    ``outside="keep"`` they are left as they are. ``target_skipped``: paths the target left
    out as its session entry lists them (checkpoints made before their commits listed them).
    """
    plan = RestorePlan(target=target, pre=pre)
    try:
        changes = store.changes(pre.commit, target)
    except GitFailed:
        if not store.exists(target):
            raise RestoreRefused(
                "That checkpoint is no longer in the store (it was pruned)."
            ) from None
        raise
    outside_paths: set[str] = set()
    if baseline is not None and store.exists(baseline) and baseline != pre.commit:
        outside_paths = {c.path for c in store.changes(baseline, pre.commit)}
    left_out = store.skipped(target)
    for path, why in (target_skipped or {}).items():
        left_out.setdefault(path, why)
    nested_now = {s.path: s.reason for s in pre.skipped if s.reason == NESTED_REPOSITORY}
    # Deleting a path the target never saved could destroy what it held: its ignore rules
    # may leave out what is saved now (a .gitignore the agent changed).
    deleting = [
        c.path for c in changes if c.status == "D" and _left_out_at(c.path, left_out) is None
    ]
    ignored = store.ignored_at(target, deleting) if deleting else set()
    accepted: list[Change] = []
    for change in changes:
        path = change.path
        if not _safe(path):
            plan.not_restorable.append(Kept(path, "not a safe path"))
        elif _left_out_at(path, nested_now) is not None:
            plan.not_restorable.append(Kept(path, "inside a nested git repository"))
        elif change.status == "D" and (saw := _left_out_at(path, left_out)) is not None:
            plan.not_restorable.append(Kept(path, f"not saved at that point: {_not_saved(saw)}"))
        elif change.status == "D" and path in ignored:
            plan.not_restorable.append(Kept(path, "ignored at that point, so not saved there"))
        elif path in outside_paths and outside == "keep":
            plan.kept.append(Kept(path, "changed outside pitui (kept)"))
        else:
            accepted.append(change)
    # Deletions first: a write may need a deleted file's place (a file becoming a folder).
    deleted = {c.path for c in accepted if c.status == "D"}
    for change in accepted:
        if change.status != "D":
            reason = _blocked(store, change, deleted)
            if reason is not None:
                plan.not_restorable.append(Kept(change.path, reason))
                continue
        if change.path in outside_paths:
            plan.outside.append(change.path)
        plan.changes.append(change)
    # What the target left out and is on disk now stays as it is: say so.
    listed = {k.path for k in plan.not_restorable}
    folders = {"/".join(p.split("/")[:i]) for p in listed for i in range(1, p.count("/") + 1)}
    for path, why in sorted(left_out.items()):
        if path in listed or path in folders or not _safe(path):
            continue
        if os.path.lexists(store.project / path):
            reason = f"not saved at that point: {_not_saved(why)}"
            plan.not_restorable.append(Kept(path, reason, differs=False))
    return plan


# ---------------------------------------------------------------------------- applying


def _device_of(path: Path) -> int:
    current = path
    while True:
        st = _lstat(current)
        if st is not None and stat.S_ISDIR(st.st_mode):
            return st.st_dev
        if current.parent == current:
            return os.lstat(current).st_dev
        current = current.parent


def _staging_for(store: CheckpointStore, device: int, token: str, made: dict[int, Path]) -> Path:
    if device in made:
        return made[device]
    store_staging = store.folder / "staging"
    store_staging.mkdir(exist_ok=True, mode=0o700)
    if os.lstat(store_staging).st_dev == device:
        folder = store_staging / token
    else:
        # Another filesystem: the highest folder of the project on that device.
        top = store.project
        if os.lstat(top).st_dev != device:
            raise RestoreRefused(
                "A folder inside the project is on another disk; pitui cannot "
                "restore across it atomically."
            )
        folder = top / f".pitui-staging-{token}"
        with open(store.folder / "staging-dirs", "a", encoding="utf-8") as f:
            f.write(str(folder) + "\n")
    folder.mkdir(mode=0o700)
    made[device] = folder
    return folder


def _stage(
    store: CheckpointStore, plan: RestorePlan, token: str
) -> tuple[list[dict[str, str]], list[dict[str, str]], list[Path]]:
    """Write every new file into staging. Returns the deletions, the renames, and the staging
    folders. Old files are moved (not unlinked) into staging and freed after the restore: on
    some filesystems freeing blocks costs milliseconds a file."""
    writes = [c for c in plan.changes if c.status != "D"]
    blobs = store.read_blobs(c.new_sha for c in writes if c.new_sha)
    made: dict[int, Path] = {}
    deletes: list[dict[str, str]] = []
    renames: list[dict[str, str]] = []
    n = 0
    for change in plan.changes:
        target = store.project / change.path
        folder = _staging_for(store, _device_of(target.parent), token, made)
        n += 1
        old = str(folder / f"old-{n}")
        if change.status == "D":
            deletes.append({"op": "unlink", "path": change.path, "trash": old})
            continue
        staged = folder / f"new-{n}"
        data = blobs[change.new_sha or ""]
        if change.new_mode == 0o120000:
            os.symlink(os.fsdecode(data), staged)
        else:
            executable = change.new_mode == 0o100755
            fd = os.open(
                staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o777 if executable else 0o666
            )
            try:
                write_all(fd, data)
                if change.new_perm is not None:
                    os.fchmod(fd, change.new_perm)
                if not _CAN_SYNCFS:
                    os.fsync(fd)
            finally:
                os.close(fd)
        renames.append({"op": "rename", "from": str(staged), "to": change.path, "trash": old})
    return deletes, renames, list(made.values())


def _operations(
    store: CheckpointStore, plan: RestorePlan, deletes: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Deletions and folder changes, in the order they must happen (before the renames)."""
    root = store.project
    ops: list[dict[str, str]] = list(deletes)
    deleted = [c.path for c in plan.changes if c.status == "D"]
    writes = [c.path for c in plan.changes if c.status != "D"]
    needed_dirs: set[str] = set()
    for path in writes:
        parts = path.split("/")
        for i in range(1, len(parts)):
            needed_dirs.add("/".join(parts[:i]))
    # Folders where a file must go (their files are all among the deletions), deepest first.
    candidates: set[str] = set()
    for path in writes:
        st = _lstat(root / path)
        if st is not None and stat.S_ISDIR(st.st_mode):
            for dirpath, dirnames, _ in os.walk(root / path):
                for d in dirnames:
                    candidates.add(
                        os.path.relpath(os.path.join(dirpath, d), root).replace(os.sep, "/")
                    )
            candidates.add(path)
    for path in deleted:
        parts = path.split("/")
        for i in range(1, len(parts)):
            candidates.add("/".join(parts[:i]))
    for folder in sorted(candidates - needed_dirs, key=lambda p: -p.count("/")):
        ops.append({"op": "rmdir", "path": folder})
    for folder in sorted(needed_dirs, key=lambda p: p.count("/")):
        ops.append({"op": "mkdir", "path": folder})
    return ops


def _set_aside(path: Path, trash: str | None) -> None:
    """Remove a file or symlink: moved to ``trash`` (freed later), else unlinked."""
    if trash:
        try:
            os.rename(path, trash)
            return
        except OSError:
            pass
    os.unlink(path)


def _replay(store: CheckpointStore, ops: list[dict[str, str]]) -> None:
    """Apply the journal's operations; running them again after a crash is harmless."""
    root = store.project
    for op in ops:
        kind = op["op"]
        if kind == "rename":
            source = Path(op["from"])
            if os.path.lexists(source):
                target = root / op["to"]
                st = _lstat(target)
                if st is not None and stat.S_ISDIR(st.st_mode):
                    with contextlib.suppress(OSError):
                        target.rmdir()
                elif st is not None and op.get("trash") and not os.path.lexists(op["trash"]):
                    # Keep the old inode alive in staging so the rename frees nothing now.
                    with contextlib.suppress(OSError):
                        os.link(target, op["trash"], follow_symlinks=False)
                os.replace(source, target)
            continue
        path = root / op["path"]
        st = _lstat(path)
        if kind == "unlink":
            if st is not None and not stat.S_ISDIR(st.st_mode):
                _set_aside(path, op.get("trash"))
        elif kind == "rmdir":
            if st is not None and stat.S_ISDIR(st.st_mode):
                with contextlib.suppress(OSError):
                    path.rmdir()  # only when empty
        elif kind == "mkdir" and st is None:
            path.mkdir()


def _remove_folders(folders: list[Path]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def _cleanup(store: CheckpointStore, folders: list[Path]) -> None:
    """Remove staging folders, and any a killed process left (the caller holds the lock)."""
    _remove_folders(folders)
    listing = store.folder / "staging-dirs"
    if listing.exists():
        for line in listing.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
            if Path(line).name.startswith(".pitui-staging-"):
                shutil.rmtree(line, ignore_errors=True)
        listing.unlink()
    staging = store.folder / "staging"
    if staging.is_dir():
        for leftover in staging.iterdir():
            shutil.rmtree(leftover, ignore_errors=True)


def apply_plan_locked(store: CheckpointStore, plan: RestorePlan) -> RestoreResult:
    """Stage, journal, apply (the caller holds the lock and made ``plan`` under it)."""
    result = RestoreResult(plan=plan, kept=[*plan.kept, *plan.not_restorable])
    if plan.empty:
        return result
    token = secrets.token_hex(6)
    folders: list[Path] = []
    try:
        deletes, renames, folders = _stage(store, plan, token)
        _sync_staging(folders)
        ops = _operations(store, plan, deletes) + renames
        journal = {
            "version": 1,
            "project": str(store.project),
            "pre": plan.pre.commit,
            "target": plan.target,
            "staging": [str(f) for f in folders],
            "ops": ops,
        }
        write_atomic(store.folder / JOURNAL, json.dumps(journal).encode(), durable=True)
    except OSError as exc:
        _cleanup(store, folders)
        with contextlib.suppress(OSError):
            (store.folder / JOURNAL).unlink()
        raise _failed(exc) from exc
    except BaseException:
        _cleanup(store, folders)
        raise
    try:
        _replay(store, ops)
    except OSError as exc:
        log.exception("a restore stopped while applying its journal in %s", store.project)
        from pitui.checkpoint.store import failure_reason

        raise RestoreFailed(
            f"The restore stopped half way ({failure_reason(exc)}); the next pitui that "
            "opens this folder's checkpoints finishes it, or start pitui here again."
        ) from exc
    (store.folder / JOURNAL).unlink()
    # The restore is done; what staging holds now (the old files) is freed in the background.
    threading.Thread(target=_remove_folders, args=(folders,), daemon=True).start()
    result.written = [c.path for c in plan.changes if c.status != "D"]
    result.deleted = [c.path for c in plan.changes if c.status == "D"]
    return result


def _load_syncfs() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function: Callable[[int], int] = libc.syncfs
    except (OSError, AttributeError):
        return None
    return function


_syncfs = _load_syncfs()
_CAN_SYNCFS = _syncfs is not None


def _sync_staging(folders: list[Path]) -> None:
    """Make the staged files durable before the journal says they are ready: one ``syncfs``
    per filesystem (Linux), else each file was fsynced as it was written."""
    for folder in folders:
        if _syncfs is not None:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                _syncfs(fd)
            finally:
                os.close(fd)
        else:
            fsync_folder(folder)


def recover_locked(store: CheckpointStore) -> bool:
    """Finish a restore a killed process left (saving the folder as it is first); clear
    leftover staging. Returns True when a restore was finished."""
    path = store.folder / JOURNAL
    try:
        journal = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        _cleanup(store, [])
        return False
    except (OSError, ValueError):
        # A journal is written atomically, so this is damage from outside: keep it for a human.
        path.rename(path.with_suffix(".damaged"))
        _cleanup(store, [])
        return False
    with contextlib.suppress(Exception):
        saved = store.capture_locked()
        store.keep_locked("recovery", [saved.commit])
    try:
        _replay(store, list(journal.get("ops") or []))
    except OSError:
        # Something was put in the way after the crash; the folder as it was is saved above.
        log.exception("could not finish an interrupted restore in %s", store.project)
        path.rename(path.with_suffix(".failed"))
        return False
    path.unlink()
    _cleanup(store, [Path(p) for p in journal.get("staging") or []])
    return True


def restore(
    store: CheckpointStore,
    target: str,
    *,
    namespace: str | None,
    baseline: str | None = None,
    outside: OutsidePolicy = "refuse",
    expected: Capture | None = None,
    target_skipped: Mapping[str, str] | None = None,
) -> RestoreResult:
    """Capture the folder (kept under ``namespace``), then make it checkpoint ``target``.

    ``expected`` is the capture a preview showed: if the folder changed since, nothing happens
    and :class:`RestoreRefused` says so. With ``outside="refuse"`` files changed outside pitui
    since ``baseline`` stop the restore (nothing changes) and are named in the error.
    """
    with store.locked():
        recover_locked(store)
        try:
            pre = store.capture_locked()
            if namespace is not None:
                store.keep_locked(namespace, [pre.commit])
        except (OSError, GitFailed) as exc:
            raise _failed(exc, "the folder could not be saved first, ") from exc
        if expected is not None and not pre.same_state(expected):
            raise RestoreRefused(
                "The files changed since the preview; look at the changes again before restoring."
            )
        plan = plan_restore(
            store, target, pre, baseline=baseline, outside=outside, target_skipped=target_skipped
        )
        if plan.outside and outside == "refuse":
            shown = ", ".join(plan.outside[:5]) + (" …" if len(plan.outside) > 5 else "")
            raise RestoreRefused(
                f"{len(plan.outside)} file(s) changed outside pitui since the last checkpoint "
                f"({shown}); confirm overwriting them (they are saved first) or keep them.",
                plan.outside,
            )
        return apply_plan_locked(store, plan)


def preview(
    store: CheckpointStore,
    target: str,
    *,
    baseline: str | None = None,
    target_skipped: Mapping[str, str] | None = None,
) -> RestorePlan:
    """What :func:`restore` would do now (captures the folder; changes nothing in it)."""
    with store.locked():
        recover_locked(store)
        pre = store.capture_locked()
        return plan_restore(
            store,
            target,
            pre,
            baseline=baseline,
            outside="overwrite",
            target_skipped=target_skipped,
        )
