"""``CheckpointStore``: the working directory captured into a private, content-addressed store.

One store per project folder, under pitui's state dir::

    <state dir>/checkpoints/<folder name>-<hash of its real path>/
        git/            a bare git object store (objects, refs); our GIT_DIR
        index           our private index (the stat cache that makes captures incremental)
        lock            held by whoever writes (see :mod:`pitui.checkpoint.lock`)
        project         the folder's path, for people looking around
        exclude, base-exclude   ignore rules (see :mod:`pitui.checkpoint.ignore`)
        last            the last capture: ``<commit> <tree>``
        churn.json      big binary files that keep changing (left out from the third change
                        within a day, until one is left alone for an hour)
        journal.json    a restore in progress (see :mod:`pitui.checkpoint.restore`)

A capture is a git commit whose tree is the folder (every file not ignored, executable bits and
symlinks as git keeps them) and whose message lists the files with unusual permissions
(``0600`` and the like), so a restore gives them back exactly, and the paths it saw but left
out (too large, churning, a nested repository…), so a restore never deletes what it never
saved. The user's own ``.git``, index,
refs and stash are never read for writing, and nothing runs git in their repository.

Refs ``refs/pitui/<session id>/<commit>`` keep a session's checkpoints alive; pruning deletes
refs by the user's policy and lets git drop what nothing references.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pitui.checkpoint.git import (
    BULK_CHECKIN_VERSION,
    Git,
    GitFailed,
    GitUnavailable,
    find_git,
    git_version,
)
from pitui.checkpoint.ignore import base_exclude_text, exclude_text
from pitui.checkpoint.lock import store_lock
from pitui.checkpoint.settings import CheckpointSettings
from pitui.durable import TEMP_SUFFIX, is_stale_temp, replace_atomically
from pitui.errors import UserError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
USUAL_PERMS = frozenset({0o644, 0o755, 0o664, 0o775})
"""Permissions git's executable bit describes well enough; others are kept in the message."""
CHURN_MIN_SIZE = 256 * 1024
CHURN_LIMIT = 3
BULK_MIN_FILES = 1000
"""A capture that adds at least this many files writes them into one pack (see
:data:`pitui.checkpoint.git.BULK_CHECKIN_VERSION`); fewer go in as loose objects, packed later."""
MAX_PACKS = 30
"""More packs than this (each bulk capture adds one) are merged after a run."""
_REF_SAFE = re.compile(r"[^A-Za-z0-9._-]")
TEMP_SUFFIX_BYTES = os.fsencode(TEMP_SUFFIX)
NESTED_REPOSITORY = "a nested git repository (not saved)"
"""Why a folder holding its own ``.git`` (a nested repository, a submodule) is left out."""


class CheckpointsOff(UserError):
    """Checkpoints cannot run for this folder; the message says why in one sentence."""


@dataclass(frozen=True)
class Skipped:
    """A file a checkpoint left out, and why (shown as a note)."""

    path: str
    reason: str
    size: int = 0


@dataclass(frozen=True)
class Capture:
    """One captured state of the folder."""

    commit: str
    tree: str
    modes: dict[str, int] = field(default_factory=dict)
    skipped: tuple[Skipped, ...] = ()

    def same_state(self, other: Capture) -> bool:
        return self.tree == other.tree and self.modes == other.modes


@dataclass(frozen=True)
class Change:
    """One path that differs between two states.

    ``status``: ``A`` added, ``M`` modified (content, type or permissions), ``D`` deleted.
    Modes are git's (``0o100644``, ``0o100755``, ``0o120000`` for a symlink); ``perm`` is the
    exact permission when it is unusual.
    """

    path: str
    status: str
    old_sha: str | None = None
    new_sha: str | None = None
    old_mode: int = 0
    new_mode: int = 0
    old_perm: int | None = None
    new_perm: int | None = None

    @property
    def is_symlink(self) -> bool:
        return (self.new_mode or self.old_mode) == 0o120000


def display_path(path: str) -> str:
    """A path as text (bytes that are not UTF-8 shown as U+FFFD), for JSON and screens."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def size_text(size: int) -> str:
    """``2 GB``, ``250 MB``, ``10 MB``, ``1.5 MB``, ``300 KB``."""
    if size >= 1024**3:
        return f"{size / 1024**3:.3g} GB"
    if size >= 1024**2:
        mib = size / 1024**2
        return f"{mib:.3g} MB" if mib < 100 else f"{mib:.0f} MB"
    return f"{max(1, round(size / 1024))} KB"


def store_folder_for(project: Path, root: Path) -> Path:
    real = os.path.realpath(project)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(real) or "root")[:40]
    return root / f"{name}-{digest}"


def write_atomic(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Replace ``path`` with ``data``: readers see old or new, never half
    (:func:`pitui.durable.replace_atomically`; ``durable`` for the restore journal)."""
    replace_atomically(path, data, durable=durable)


MAX_SKIPS_LISTED = 5000
"""At most this many left-out paths are listed in a checkpoint's message."""


def parse_manifest(message: bytes) -> dict[str, int]:
    """The unusual permissions a checkpoint commit's message lists (``mode 0600 path``)."""
    modes: dict[str, int] = {}
    for line in message.split(b"\n"):
        if line.startswith(b"mode "):
            parts = line.split(b" ", 2)
            if len(parts) == 3:
                with contextlib.suppress(ValueError):
                    modes[os.fsdecode(parts[2])] = int(parts[1], 8)
    return modes


def skip_line(skipped: Skipped) -> str:
    """``skip "PATH" REASON``: the path as a JSON string (any byte survives), then why."""
    return f"skip {json.dumps(skipped.path)} {skipped.reason}\n"


def parse_skips(message: bytes) -> dict[str, str]:
    """The paths a checkpoint left out (``skip`` lines of its message) → why."""
    out: dict[str, str] = {}
    decoder = json.JSONDecoder()
    text = message.decode("utf-8", "surrogateescape")
    for line in text.split("\n"):
        if not line.startswith("skip "):
            continue
        try:
            path, end = decoder.raw_decode(line, 5)
        except ValueError:
            continue
        if isinstance(path, str):
            out[path] = line[end:].strip()
    return out


CHURN_WINDOW_NS = 86400 * 10**9
"""Changes further apart than this (a day) start the count again."""
CHURN_SETTLE_NS = 3600 * 10**9
"""A file left out for churning is saved again once it has not changed for this long."""


def _churn_verdict(
    seen: list[int] | None, st: os.stat_result, tracked: bool, path: Path
) -> list[int] | None:
    """The binary-churn record of a big file at this capture: ``[changes, size, mtime_ns]``,
    left out of the checkpoint from :data:`CHURN_LIMIT` changes on; None: forget it (saved).

    ``tracked``: the file was saved before and changed since (a listed tracked file); an
    untracked one is new, or already left out."""
    now = [st.st_size, st.st_mtime_ns]
    if tracked:
        if not _is_binary(path):
            return None
        count = seen[0] if seen and st.st_mtime_ns - seen[2] < CHURN_WINDOW_NS else 0
        return [count + 1, *now]
    if seen is None or seen[0] < CHURN_LIMIT:
        return seen  # new (saved now, counted from its first change on)
    if time.time_ns() - st.st_mtime_ns >= CHURN_SETTLE_NS:
        return None  # it settled down: saved again
    if now != seen[1:]:
        return [seen[0] + 1, *now]  # still changing: still left out
    return seen


def _is_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return b"\0" in f.read(8000)
    except OSError:
        return False


class CheckpointStore:
    """Capture, compare and prune the checkpoints of one project folder."""

    def __init__(self, project: Path, folder: Path, git: Git, settings: CheckpointSettings):
        self.project = project
        self.folder = folder
        self.git = git
        self.settings = settings
        self.lock_path = folder / "lock"
        self.exclude_path = folder / "exclude"
        self.base_exclude_path = folder / "base-exclude"
        self._manifests: dict[str, dict[str, int]] = {}
        self._skips: dict[str, dict[str, str]] = {}
        self.bulk_checkin = git_version(git.exe) >= BULK_CHECKIN_VERSION

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls, project: str | os.PathLike[str], settings: CheckpointSettings, root: Path
    ) -> CheckpointStore:
        """Open (creating if needed) the store of ``project`` under ``root``.

        Raises :class:`GitUnavailable` or :class:`CheckpointsOff` with one sentence; finishes a
        restore a killed pitui left half done.
        """
        exe, problem = find_git()
        if exe is None:
            raise GitUnavailable(problem or "git is not available, so file checkpoints are off.")
        project_path = Path(os.path.realpath(project))
        if not project_path.is_dir():
            raise CheckpointsOff(
                f"{project_path} is not a folder, so there is nothing to checkpoint."
            )
        home = os.path.realpath(os.path.expanduser("~"))
        if str(project_path) in (home, "/") or project_path.parent == project_path:
            raise CheckpointsOff(
                "pitui does not checkpoint your home folder or the filesystem root; "
                "start it in a project folder for file checkpoints."
            )
        folder = store_folder_for(project_path, root)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        git = Git(
            exe,
            folder / "git",
            project_path,
            folder / "index",
            folder / "base-exclude",
            owned=folder,
        )
        store = cls(project_path, folder, git, settings)
        with store_lock(store.lock_path):
            if not (folder / "git" / "HEAD").exists():
                git.init()
                (folder / "project").write_text(str(project_path) + "\n", encoding="utf-8")
            attributes = folder / "git" / "info" / "attributes"
            if not attributes.exists():
                # Highest precedence: no line-ending, filter or encoding conversion, ever.
                attributes.parent.mkdir(exist_ok=True)
                attributes.write_text(
                    "* -text -filter -ident -eol -working-tree-encoding -diff\n", encoding="utf-8"
                )
            write_atomic(store.base_exclude_path, base_exclude_text(project_path).encode())
            store._recover_locked()
        return store

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock (re-entrant use is a programming error: flock would deadlock)."""
        with store_lock(self.lock_path):
            yield

    # ------------------------------------------------------------------ capture

    def capture(self, namespace: str | None = None) -> Capture:
        """Capture the folder now; with ``namespace`` (a session id) the checkpoint is kept."""
        with self.locked():
            self._recover_locked()
            result = self.capture_locked()
            if namespace is not None:
                self.keep_locked(namespace, [result.commit])
            return result

    def capture_locked(self) -> Capture:
        """:meth:`capture` for a caller that holds the lock (and has recovered)."""
        settings = self.settings
        excludes = exclude_text(settings.exclude).encode()
        excludes_changed = False
        try:
            excludes_changed = self.exclude_path.read_bytes() != excludes
        except FileNotFoundError:
            excludes_changed = True
        if excludes_changed:
            write_atomic(self.exclude_path, excludes)
        exclude_from = f"--exclude-from={self.exclude_path}"
        # Tracked files whose stat data changed (content, mode, or only touched: diff-files
        # lists them all, and re-adding refreshes the stat data), and files not yet tracked.
        stat_dirty, others = self.git.run_together(
            [
                ["diff-files", "-z", "--name-only", "--no-renames"],
                ["ls-files", "-z", "-o", "--exclude-standard", exclude_from],
            ]
        )
        listing = [(True, raw) for raw in stat_dirty.split(b"\0") if raw]
        listing += [(False, raw) for raw in others.split(b"\0") if raw]
        last = self._last()
        modes = dict(self._manifest(last[0])) if last else {}
        churn = self._load_churn() if settings.skip_binary_churn else {}
        new_churn: dict[str, list[int]] = {}
        update: list[bytes] = []
        force_remove: list[bytes] = []
        skipped: list[Skipped] = []
        untracked = 0
        gitignore_changed = False
        work = os.fsencode(self.project)
        for tracked, raw in listing:
            path = os.fsdecode(raw)
            if raw.endswith(b"/"):
                skipped.append(Skipped(path.rstrip("/"), NESTED_REPOSITORY))
                continue
            if not tracked and raw.endswith(TEMP_SUFFIX_BYTES):
                # An atomic write's temp file: never saved; one a killed pitui left goes.
                with contextlib.suppress(OSError):
                    full = work + b"/" + raw
                    if is_stale_temp(raw.rsplit(b"/", 1)[-1], os.lstat(full)):
                        os.unlink(full)
                continue
            if not tracked:
                untracked += 1
                if untracked > settings.max_files:
                    raise CheckpointsOff(
                        f"This folder has more than {settings.max_files:,} files that are not "
                        "ignored, so checkpoints are off here: ignore big folders with "
                        ".gitignore or the checkpoint.exclude setting."
                    )
            if raw.rsplit(b"/", 1)[-1] == b".gitignore":
                gitignore_changed = True
            try:
                st = os.lstat(work + b"/" + raw)
            except FileNotFoundError:
                update.append(raw)  # deleted: --remove takes it out
                modes.pop(path, None)
                continue
            except NotADirectoryError:
                force_remove.append(raw)  # a folder of its path became a file or a symlink
                modes.pop(path, None)
                continue
            except OSError as exc:
                skipped.append(Skipped(path, f"unreadable ({exc.strerror})"))
                if tracked:
                    force_remove.append(raw)
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                if stat.S_ISDIR(st.st_mode):
                    continue
                skipped.append(Skipped(path, "not a regular file"))
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > settings.max_file_size:
                limit = size_text(settings.max_file_size)
                skipped.append(Skipped(path, f"larger than {limit}", st.st_size))
                if tracked:
                    force_remove.append(raw)
                modes.pop(path, None)
                continue
            if (
                settings.skip_binary_churn
                and stat.S_ISREG(st.st_mode)
                and st.st_size >= CHURN_MIN_SIZE
            ):
                seen = churn.pop(path, None)
                verdict = _churn_verdict(seen, st, tracked, self.project / path)
                if verdict is not None:
                    new_churn[path] = verdict
                    if verdict[0] >= CHURN_LIMIT:
                        skipped.append(
                            Skipped(
                                path, "a binary file that changes at every checkpoint", st.st_size
                            )
                        )
                        if tracked:
                            force_remove.append(raw)
                        modes.pop(path, None)
                        continue
            elif tracked:
                churn.pop(path, None)  # deleted, smaller, or no longer checked
            update.append(raw)
            perm = stat.S_IMODE(st.st_mode)
            if stat.S_ISREG(st.st_mode) and perm not in USUAL_PERMS:
                modes[path] = perm
            else:
                modes.pop(path, None)
        # Files with unusual permissions are few: look at each again, since a change of
        # permissions alone is seen by git only when it happens a second or more later.
        listed = {os.fsdecode(raw) for _, raw in listing}
        for path in [p for p in modes if p not in listed]:
            try:
                perm = stat.S_IMODE(os.lstat(self.project / path).st_mode)
            except OSError:
                continue
            if perm in USUAL_PERMS:
                del modes[path]
            else:
                modes[path] = perm
        if update:
            bulk = len(update) >= BULK_MIN_FILES and self.bulk_checkin
            self.git.run(
                ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
                input=b"\0".join(update) + b"\0",
                config=("core.bigFileThreshold=1",) if bulk else (),
            )
        if excludes_changed or gitignore_changed:
            # Files we saved before that the rules now ignore leave the checkpoints.
            ignored = self.git.run(
                ["ls-files", "-z", "-c", "-i", "--exclude-standard", exclude_from]
            )
            names = [n for n in ignored.split(b"\0") if n]
            force_remove.extend(names)
            for name in names:
                modes.pop(os.fsdecode(name), None)
        if force_remove:
            self.git.run(
                ["update-index", "--force-remove", "-z", "--stdin"],
                input=b"\0".join(force_remove) + b"\0",
            )
        tree = self.git.run(["write-tree"]).decode().strip()
        if settings.skip_binary_churn and (new_churn or churn):
            # Files this capture did not list did not change: they keep their count.
            for path, seen in churn.items():
                if os.path.lexists(self.project / path):
                    new_churn[path] = seen
            self._save_churn(new_churn)
        left_out = sorted(skipped, key=lambda s: s.path)[:MAX_SKIPS_LISTED]
        skips = {s.path: s.reason for s in left_out}
        if (
            last is not None
            and last[1] == tree
            and self._manifest(last[0]) == modes
            and self.skipped(last[0]) == skips
        ):
            return Capture(last[0], tree, modes, tuple(skipped))
        message = (
            "pitui checkpoint\n\n"
            + "".join(f"mode {perm:04o} {path}\n" for path, perm in sorted(modes.items()))
            + "".join(skip_line(s) for s in left_out)
        )
        commit = (
            self.git.run(
                ["commit-tree", tree, "-F", "-"],
                input=message.encode("utf-8", "surrogateescape"),
            )
            .decode()
            .strip()
        )
        self._manifests[commit] = dict(modes)
        self._skips[commit] = skips
        write_atomic(self.folder / "last", f"{commit} {tree}\n".encode())
        return Capture(commit, tree, modes, tuple(skipped))

    def _last(self) -> tuple[str, str] | None:
        """The last capture ``(commit, tree)``, if it is still in the store."""
        try:
            parts = (self.folder / "last").read_text().split()
        except OSError:
            return None
        if len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{40}", parts[0]):
            return None
        try:
            self._manifest(parts[0])  # reads the commit: fails if it was pruned
        except GitFailed:
            return None
        return parts[0], parts[1]

    def _load_churn(self) -> dict[str, list[int]]:
        try:
            data = json.loads((self.folder / "churn.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            path: seen
            for path, seen in data.items()
            if isinstance(seen, list) and len(seen) == 3 and all(type(v) is int for v in seen)
        }

    def _save_churn(self, data: dict[str, list[int]]) -> None:
        write_atomic(self.folder / "churn.json", json.dumps(data).encode())

    # ------------------------------------------------------------------ reading

    def exists(self, commit: str) -> bool:
        if not re.fullmatch(r"[0-9a-f]{40}", commit or ""):
            return False
        out = self.git.run(["cat-file", "-t", commit], check=False)
        return out.strip() == b"commit"

    def missing(self, commits: Iterable[str]) -> set[str]:
        """Which of ``commits`` are no longer in the store (pruned)."""
        wanted = [c for c in dict.fromkeys(commits) if c]
        if not wanted:
            return set()
        out = self.git.run(
            ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
            input=("\n".join(wanted) + "\n").encode(),
        )
        present = set()
        for line in out.decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == "commit":
                present.add(parts[0])
        return set(wanted) - present

    def tree_of(self, commit: str) -> str:
        return self.git.run(["rev-parse", f"{commit}^{{tree}}"]).decode().strip()

    def _manifest(self, commit: str) -> dict[str, int]:
        cached = self._manifests.get(commit)
        if cached is None:
            self._read_message(commit)
            cached = self._manifests[commit]
        return cached

    def _read_message(self, commit: str) -> None:
        body = self.git.run(["cat-file", "commit", commit]).split(b"\n\n", 1)[-1]
        self._manifests[commit] = parse_manifest(body)
        self._skips[commit] = parse_skips(body)

    def skipped(self, commit: str) -> dict[str, str]:
        """The paths checkpoint ``commit`` saw and left out → why (see :class:`Skipped`)."""
        cached = self._skips.get(commit)
        if cached is None:
            self._read_message(commit)
            cached = self._skips[commit]
        return dict(cached)

    def ignored_at(self, commit: str, paths: Iterable[str]) -> set[str]:
        """Which of ``paths`` the ignore rules in effect at checkpoint ``commit`` leave out: its
        ``.gitignore`` files, with pitui's excludes and the folder's inherited ones as now.

        The checkpoint's ``.gitignore`` files are written into a scratch folder (with the
        paths' folders) and ``git check-ignore`` reads them there: the project is not touched.
        """
        wanted = sorted({p for p in paths if p})
        if not wanted:
            return set()
        listing = self.git.run(["ls-tree", "-r", "-z", "--full-tree", commit])
        ignore_files: dict[str, str] = {}
        for item in listing.split(b"\0"):
            meta, _, raw = item.partition(b"\t")
            name = os.fsdecode(raw)
            if name.rsplit("/", 1)[-1] == ".gitignore" and meta.startswith(b"100"):
                ignore_files[name] = meta.split()[2].decode()
        blobs = self.read_blobs(ignore_files.values())
        ours = exclude_text(self.settings.exclude).encode()
        with tempfile.TemporaryDirectory(prefix="pitui-ignore-", dir=self.folder) as scratch:
            root = Path(scratch) / "tree"
            root.mkdir()
            for name, sha in ignore_files.items():
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                data = blobs[sha]
                if name == ".gitignore":
                    data = data + b"\n" + ours  # pitui's own excludes win at the top
                target.write_bytes(data)
            if ".gitignore" not in ignore_files:
                (root / ".gitignore").write_bytes(ours)
            for path in wanted:
                parent = (root / path).parent
                with contextlib.suppress(OSError):
                    parent.mkdir(parents=True, exist_ok=True)
            checker = Git(
                self.git.exe,
                self.git.git_dir,
                root,
                Path(scratch) / "index",
                self.base_exclude_path,
            )
            out = checker.run(
                ["check-ignore", "--no-index", "-z", "--stdin"],
                input=b"\0".join(os.fsencode(p) for p in wanted) + b"\0",
                ok_codes=(0, 1),
            )
        return {os.fsdecode(raw) for raw in out.split(b"\0") if raw}

    def modes(self, commit: str) -> dict[str, int]:
        """The unusual permissions recorded with a checkpoint (path → ``0o600`` …)."""
        return dict(self._manifest(commit))

    def changes(self, old: str | None, new: str) -> list[Change]:
        """What differs from checkpoint ``old`` (None: nothing) to checkpoint ``new``."""
        old_tree = old if old is not None else EMPTY_TREE
        out = self.git.run(
            ["diff-tree", "-r", "-z", "--no-renames", "--raw", "--no-commit-id", old_tree, new]
        )
        old_modes = self._manifest(old) if old is not None else {}
        new_modes = self._manifest(new)
        changes: dict[str, Change] = {}
        fields = out.split(b"\0")
        i = 0
        while i + 1 < len(fields):
            meta = fields[i]
            if not meta.startswith(b":"):
                i += 1
                continue
            path = os.fsdecode(fields[i + 1])
            i += 2
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].decode().split()
            if old_mode == "160000" or new_mode == "160000":
                continue  # nested repositories are not saved
            kind = {"A": "A", "D": "D"}.get(status[0], "M")
            changes[path] = Change(
                path=path,
                status=kind,
                old_sha=None if kind == "A" else old_sha,
                new_sha=None if kind == "D" else new_sha,
                old_mode=int(old_mode, 8),
                new_mode=int(new_mode, 8),
                old_perm=old_modes.get(path),
                new_perm=new_modes.get(path),
            )
        # Permission-only changes are invisible to git's tree.
        for path in set(old_modes) | set(new_modes):
            if path in changes or old_modes.get(path) == new_modes.get(path):
                continue
            entry = self.git.run(["ls-tree", "-z", new, "--", path], check=False)
            old_entry = self.git.run(["ls-tree", "-z", old_tree, "--", path], check=False)
            if not entry.strip(b"\0") or not old_entry.strip(b"\0"):
                continue
            mode, _, rest = entry.partition(b" ")
            sha = rest.split(b"\t", 1)[0].split(b" ")[-1].decode()
            changes[path] = Change(
                path=path,
                status="M",
                old_sha=sha,
                new_sha=sha,
                old_mode=int(mode, 8),
                new_mode=int(mode, 8),
                old_perm=old_modes.get(path),
                new_perm=new_modes.get(path),
            )
        return [changes[p] for p in sorted(changes)]

    def files(self, commit: str) -> dict[str, tuple[int, str]]:
        """Every path of a checkpoint → (git mode, blob id)."""
        out = self.git.run(["ls-tree", "-r", "-z", "--full-tree", commit])
        files: dict[str, tuple[int, str]] = {}
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, raw = item.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            if mode == "160000":
                continue
            files[os.fsdecode(raw)] = (int(mode, 8), sha)
        return files

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        return self.git.read_blobs([s for s in shas if s])

    # ------------------------------------------------------------------ keeping and pruning

    @staticmethod
    def ref_namespace(session_id: str) -> str:
        return _REF_SAFE.sub("_", session_id)[:80] or "_"

    def keep(self, namespace: str, commits: Iterable[str]) -> None:
        """Keep ``commits`` alive for session ``namespace`` (a fork adopts its parent's)."""
        with self.locked():
            self.keep_locked(namespace, commits)

    def keep_locked(self, namespace: str, commits: Iterable[str]) -> None:
        ns = self.ref_namespace(namespace)
        wanted = [c for c in dict.fromkeys(commits) if re.fullmatch(r"[0-9a-f]{40}", c)]
        if not wanted:
            return
        if len(wanted) == 1:
            # The common case (a capture just made): one command, a no-op if the ref exists.
            self.git.run(["update-ref", f"refs/pitui/{ns}/{wanted[0]}", wanted[0]])
            return
        have = set(
            self.git.run(["for-each-ref", "--format=%(refname)", f"refs/pitui/{ns}/"])
            .decode()
            .split()
        )
        todo = [c for c in wanted if f"refs/pitui/{ns}/{c}" not in have]
        present = set(todo) - self.missing(todo)
        lines = "".join(f"update refs/pitui/{ns}/{c} {c}\n" for c in todo if c in present)
        if lines:
            self.git.run(["update-ref", "--stdin"], input=lines.encode())

    def _object_counts(self) -> dict[str, int]:
        """``git count-objects -v``: ``count`` loose objects, ``size`` and ``size-pack`` (KiB),
        ``packs``, ``size-garbage`` (KiB)."""
        out = self.git.run(["count-objects", "-v"]).decode()
        values = {}
        for line in out.splitlines():
            key, _, value = line.partition(": ")
            if value.strip().isdigit():
                values[key.strip()] = int(value)
        return values

    def size_bytes(self) -> int:
        """What the store's objects take on disk (loose, packed and garbage)."""
        counts = self._object_counts()
        kib = counts.get("size", 0) + counts.get("size-pack", 0) + counts.get("size-garbage", 0)
        return kib * 1024

    def loose_objects(self) -> int:
        return self._object_counts().get("count", 0)

    def refs(self) -> list[tuple[str, str, int]]:
        """``(namespace, commit, committed at)`` of every kept checkpoint."""
        out = self.git.run(
            ["for-each-ref", "--format=%(refname) %(committerdate:unix)", "refs/pitui/"]
        ).decode()
        rows = []
        for line in out.splitlines():
            name, _, when = line.rpartition(" ")
            parts = name.split("/")
            if len(parts) == 4 and when.isdigit():
                rows.append((parts[2], parts[3], int(when)))
        return rows

    def prune(
        self,
        *,
        current: str | None = None,
        needed: Iterable[str] = (),
        now: float | None = None,
    ) -> PruneReport:
        """Apply the policy: other sessions' checkpoints older than ``keepDays`` go; then, while
        the store is over ``maxStoreMB``, the oldest go (other sessions first, then this
        session's) and what nothing references any more is dropped at once. The ``needed``
        commits (what the current tree's branch needs) are never pruned, nor the ``current``
        session's checkpoints by age."""
        with self.locked():
            return self._prune_locked(current, set(needed), now if now is not None else time.time())

    def _prune_locked(self, current: str | None, needed: set[str], now: float) -> PruneReport:
        ns_current = self.ref_namespace(current) if current else None
        rows = self.refs()
        cutoff = now - self.settings.keep_days * 86400
        doomed = [
            (ns, c, t)
            for ns, c, t in rows
            if ns != ns_current and t < cutoff and c not in needed and ns != "recovery"
        ]
        doomed += [(ns, c, t) for ns, c, t in rows if ns == "recovery" and t < cutoff]
        deleted = self._delete_refs(doomed)
        self._repack(full=True)
        rounds = 0
        size = self.size_bytes()
        while size > self.settings.max_store_bytes and rounds < 6:
            rows = self.refs()
            candidates = sorted(
                (r for r in rows if r[1] not in needed),
                key=lambda r: (r[0] == ns_current, r[2]),
            )
            if not candidates:
                break
            batch = candidates[: max(1, len(candidates) // 4)]
            deleted += self._delete_refs(batch)
            # Every writer holds the store's lock and references what it writes before letting
            # go of it, so nothing unreferenced is about to be used: drop it now.
            self._repack(full=True, expire="now")
            size = self.size_bytes()
            rounds += 1
        if size > self.settings.max_store_bytes and rounds == 0:
            self._repack(full=True, expire="now")  # garbage alone may be what is over
            size = self.size_bytes()
        with contextlib.suppress(OSError):
            (self.folder / "pruned-at").write_text(f"{now:.0f}\n")
        return PruneReport(deleted=deleted, size=size)

    def _delete_refs(self, rows: list[tuple[str, str, int]]) -> int:
        if not rows:
            return 0
        lines = "".join(f"delete refs/pitui/{ns}/{c}\n" for ns, c, _ in rows)
        self.git.run(["update-ref", "--stdin"], input=lines.encode())
        return len(rows)

    def _repack(self, *, full: bool, expire: str = "1.hour.ago") -> None:
        if full:
            self.git.run(["pack-refs", "--all"])
            # By age, unreachable objects younger than an hour stay (a capture that did not
            # keep its commit, such as a preview's, may still be looked at for a moment).
            self.git.run(["repack", "-a", "-d", "-q", f"--unpack-unreachable={expire}"])
            self.git.run(["prune", f"--expire={expire}"])
        else:
            self.git.run(["repack", "-d", "-q"])

    def maintain(self, *, current: str | None, needed: Iterable[str]) -> PruneReport | None:
        """After a run: prune once a day, and at once when the store is over its size cap;
        pack loose objects when there are many, and merge packs when there are many."""
        try:
            last = float((self.folder / "pruned-at").read_text().strip())
        except (OSError, ValueError):
            last = 0.0
        counts = self._object_counts()
        size = (
            counts.get("size", 0) + counts.get("size-pack", 0) + counts.get("size-garbage", 0)
        ) * 1024
        if time.time() - last > 86400 or size > self.settings.max_store_bytes:
            return self.prune(current=current, needed=needed)
        if counts.get("packs", 0) > MAX_PACKS:
            with self.locked():
                self._repack(full=True)
        elif counts.get("count", 0) > 5000:
            with self.locked():
                self._repack(full=False)
        return None

    # ------------------------------------------------------------------ recovery

    def _recover_locked(self) -> None:
        from pitui.checkpoint.restore import recover_locked

        recover_locked(self)


@dataclass(frozen=True)
class PruneReport:
    deleted: int
    size: int


def failure_reason(exc: BaseException) -> str:
    """Why a capture (or opening the store) failed, in a few words for a sentence."""
    if isinstance(exc, GitFailed):
        lines = [line.strip() for line in exc.stderr.splitlines() if line.strip()]
        first = lines[0] if lines else f"exit status {exc.code}"
        for prefix in ("fatal: ", "error: "):
            first = first.removeprefix(prefix)
        if "No space left on device" in exc.stderr:
            return "the disk is full"
        return f"git: {first[:200]}"
    if isinstance(exc, OSError):
        if exc.errno == errno.ENOSPC:
            return "the disk is full"
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    if isinstance(exc, UserError):
        return str(exc).rstrip(".")
    return f"{type(exc).__name__}: {exc}"[:200]


def open_store_or_reason(
    project: str | os.PathLike[str], settings: CheckpointSettings, root: Path
) -> tuple[CheckpointStore | None, str | None]:
    """:meth:`CheckpointStore.open`, or ``(None, one sentence why checkpoints are off)``."""
    if not settings.enabled:
        return None, "File checkpoints are off (checkpoint.enabled is false)."
    try:
        return CheckpointStore.open(project, settings, root), None
    except (GitUnavailable, CheckpointsOff) as exc:
        return None, str(exc)
    except (OSError, GitFailed) as exc:
        return None, f"File checkpoints are off: the store could not be opened ({exc})."
