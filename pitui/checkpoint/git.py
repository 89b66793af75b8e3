"""Running git plumbing on pitui's own object store, isolated from the user's repository.

Every command gets ``GIT_DIR`` (our store), ``GIT_WORK_TREE`` (the project folder) and
``GIT_INDEX_FILE`` (our private index), no system or global config, and explicit settings for
what must not vary (no line-ending or filter conversion, symlinks and executable bits kept, no
fsmonitor). Inherited ``GIT_*`` variables are dropped, so nothing can point us at the user's
``.git``, index or refs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from pitui.errors import UserError

MIN_VERSION = (2, 25)
"""``ls-files -t``, ``update-index -z --stdin`` and ``--pathspec`` magic are older; 2.25 (2020)
is the oldest we test the behaviour of."""

GIT_CONFIG: tuple[str, ...] = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.eol=lf",
    "core.symlinks=true",
    "core.filemode=true",
    "core.ignorecase=false",
    "core.precomposeunicode=false",
    "core.quotepath=false",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.bigFileThreshold=512m",
    "core.compression=1",
    "core.looseCompression=1",
    "gc.auto=0",
    "gc.autoDetach=false",
    "gc.reflogExpire=now",
    "gc.reflogExpireUnreachable=now",
    "core.logAllRefUpdates=false",
    "index.threads=true",
    "index.version=4",
    "index.skipHash=true",
    "advice.detachedHead=false",
    "commit.gpgSign=false",
    "user.useConfigOnly=false",
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "pitui",
    "GIT_AUTHOR_EMAIL": "pitui@localhost",
    "GIT_COMMITTER_NAME": "pitui",
    "GIT_COMMITTER_EMAIL": "pitui@localhost",
}


_LOCK_EXISTS = re.compile(rb"Unable to create '([^'\n]+\.lock)': File exists")
"""git's message when a lock file it needs (``index.lock``, a ref's ``.lock``) is there."""


class GitUnavailable(UserError):
    """git is missing or too old: checkpoints are off (the message says so in one sentence)."""


class GitFailed(Exception):
    """A git command failed (an internal error: our own store is the only repository we use)."""

    def __init__(self, args: Sequence[str], code: int, stderr: bytes) -> None:
        text = stderr.decode(errors="replace").strip()
        super().__init__(f"git {' '.join(args[:3])} failed ({code}): {text[:500]}")
        self.code = code
        self.stderr = text


BULK_CHECKIN_VERSION = (2, 37)
"""From this version ``update-index`` writes the blobs it hashes into one pack when told to
(``core.bigFileThreshold``): the first capture of a big folder writes one file, not one per
source file (about twice as fast as ``git add -A``'s loose objects)."""

_found: dict[str, tuple[str | None, str | None]] = {}
_versions: dict[str, tuple[int, int]] = {}
_found_lock = threading.Lock()


def git_version(exe: str) -> tuple[int, int]:
    """The version :func:`find_git` read for ``exe`` (``(0, 0)`` when it did not)."""
    with _found_lock:
        return _versions.get(exe, (0, 0))


def find_git(path_env: str | None = None) -> tuple[str | None, str | None]:
    """``(git executable, None)``, or ``(None, one sentence why checkpoints are off)``.

    Runs ``git --version`` once per PATH value and remembers the answer.
    """
    key = path_env if path_env is not None else os.environ.get("PATH", "")
    with _found_lock:
        if key in _found:
            return _found[key]
    exe = shutil.which("git", path=key)
    answer: tuple[str | None, str | None]
    if exe is None:
        answer = (None, "git is not installed, so file checkpoints are off (install git).")
    else:
        try:
            out = subprocess.run(
                [exe, "--version"], capture_output=True, timeout=10, check=True
            ).stdout.decode(errors="replace")
        except (OSError, subprocess.SubprocessError):
            out = ""
        match = re.search(r"(\d+)\.(\d+)", out)
        version = (int(match.group(1)), int(match.group(2))) if match else None
        if version is None:
            answer = (None, "git does not run here, so file checkpoints are off.")
        elif version < MIN_VERSION:
            wanted = ".".join(map(str, MIN_VERSION))
            answer = (
                None,
                f"git {out.split()[-1]} is too old for file checkpoints (need {wanted}+).",
            )
        else:
            answer = (exe, None)
            with _found_lock:
                _versions[exe] = version
    with _found_lock:
        _found[key] = answer
    return answer


def clean_environment(extra: dict[str, str]) -> dict[str, str]:
    """Our environment minus every inherited ``GIT_*`` variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_ATTR_NOSYSTEM="1",
        LC_ALL="C",
        LANG="C",
    )
    env.update(IDENTITY)
    env.update(extra)
    return env


class Git:
    """git plumbing over one private object store (``git_dir``) and one work tree.

    ``owned``: a folder (the checkpoint store) whose writers all hold pitui's own lock on it
    while git runs (:mod:`pitui.checkpoint.lock`). A git lock file found there when a command
    needs it (``index.lock``, a ref's ``.lock``, ``packed-refs.lock``) was left by a git that was
    killed (kill -9 of pitui and its children): it is removed and the command runs again.
    """

    def __init__(
        self,
        exe: str,
        git_dir: Path,
        work_tree: Path,
        index_file: Path,
        excludes_file: Path,
        *,
        owned: Path | None = None,
    ) -> None:
        self.exe = exe
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.owned = Path(os.path.realpath(owned)) if owned is not None else None
        self.env = clean_environment(
            {
                "GIT_DIR": str(git_dir),
                "GIT_WORK_TREE": str(work_tree),
                "GIT_INDEX_FILE": str(index_file),
            }
        )
        self.prefix = [exe]
        for item in (*GIT_CONFIG, f"core.excludesFile={excludes_file}"):
            self.prefix += ["-c", item]

    def run(
        self,
        args: Sequence[str],
        *,
        input: bytes | None = None,
        check: bool = True,
        ok_codes: Iterable[int] = (0,),
        config: Sequence[str] = (),
    ) -> bytes:
        """Run ``git ARGS`` in the work tree; returns stdout (raises :class:`GitFailed`).

        ``config``: more ``name=value`` settings for this command only."""
        extra = [part for item in config for part in ("-c", item)]
        for attempt in range(3):
            proc = subprocess.run(
                [*self.prefix, *extra, *args],
                input=input,
                capture_output=True,
                env=self.env,
                cwd=self.work_tree,
                check=False,
            )
            if proc.returncode in tuple(ok_codes) or not check:
                return proc.stdout
            if attempt == 2 or not self.remove_stale_lock(proc.stderr):
                break
        raise GitFailed(list(args), proc.returncode, proc.stderr)

    def remove_stale_lock(self, stderr: bytes) -> bool:
        """Remove the lock file git's ``stderr`` says is in the way, when it lies in the
        :attr:`owned` folder (see the class docstring). True when one was removed."""
        found = _LOCK_EXISTS.search(stderr)
        if found is None or self.owned is None:
            return False
        lock = Path(os.path.realpath(os.fsdecode(found.group(1))))
        if not lock.is_relative_to(self.owned):
            return False
        try:
            lock.unlink()
        except FileNotFoundError:
            return True  # gone meanwhile: try again
        except OSError:
            return False
        return True

    def run_together(self, commands: Sequence[Sequence[str]]) -> list[bytes]:
        """Run several read-only commands at once (both cores help on a big folder)."""
        procs = [
            subprocess.Popen(
                [*self.prefix, *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.work_tree,
            )
            for args in commands
        ]
        outputs = []
        for args, proc in zip(commands, procs, strict=True):
            out, err = proc.communicate()
            if proc.returncode != 0:
                for other in procs:
                    if other.poll() is None:
                        other.kill()
                        other.wait()
                raise GitFailed(list(args), proc.returncode, err)
            outputs.append(out)
        return outputs

    def init(self) -> None:
        """Create the bare store (no hooks, no sample files)."""
        self.git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        subprocess.run(
            [self.exe, "init", "-q", "--bare", "--template=", str(self.git_dir)],
            capture_output=True,
            env=clean_environment({}),
            check=True,
        )
        self.run(["config", "core.bare", "false"])
        self.run(["config", "core.logAllRefUpdates", "false"])

    def read_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Contents of many blobs in one ``cat-file --batch``."""
        if not shas:
            return {}
        unique = list(dict.fromkeys(shas))
        out = self.run(["cat-file", "--batch"], input=("\n".join(unique) + "\n").encode())
        result: dict[str, bytes] = {}
        pos = 0
        for sha in unique:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if len(header) < 3 or header[1] == b"missing":
                raise GitFailed(["cat-file", sha], 1, b"object missing")
            size = int(header[2])
            result[sha] = out[pos : pos + size]
            pos += size + 1
        return result
