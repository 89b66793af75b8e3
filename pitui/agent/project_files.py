"""The files of a project, for the editor's ``@`` file picker.

In a git repository: what ``git ls-files`` gives, the tracked files and the untracked ones
that are not ignored (under the folder pitui runs in, relative to it). Elsewhere (or without
git): a walk of the folder that leaves out what ``.gitignore`` files leave out (each folder's
own, as git reads them) and ``.git`` folders, never following links to folders.

Listing a big project takes a while (100k files: a few hundred milliseconds): call
:meth:`ProjectFiles.paths` and :meth:`ProjectFiles.search` from a thread. The list is kept and
listed again when it is older than :data:`MAX_AGE` seconds; at most :data:`MAX_FILES` paths
(``truncated`` says when there were more).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pitui.agent.path_search import PathSearch
from pitui.checkpoint.ignore import enclosing_repository

MAX_FILES = 200_000
MAX_AGE = 30.0
GIT_TIMEOUT = 20.0


def _git_environment() -> dict[str, str]:
    """Ours without inherited ``GIT_*`` variables (a ``GIT_DIR`` would point elsewhere); the
    user's own git configuration stays (its global excludes leave files out, as in git)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    return env


def git_files(root: Path) -> list[str] | None:
    """The tracked and untracked-not-ignored files under ``root`` (None: not a repository,
    or git failed)."""
    if enclosing_repository(root) is None:
        return None
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=_git_environment(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    seen: dict[str, None] = {}
    for raw in done.stdout.split(b"\0"):
        if raw:
            seen[os.fsdecode(raw)] = None
        if len(seen) > MAX_FILES:
            break
    return list(seen)


# ----------------------------------------------------------------------------- .gitignore


@dataclass(frozen=True)
class _Rule:
    base: str  # the folder of the .gitignore, relative to the walk's root ("" or "a/b/")
    regex: re.Pattern[str]
    negated: bool
    folder_only: bool
    anchored: bool


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_gitignore(text: str, base: str = "") -> list[_Rule]:
    """The rules of one ``.gitignore`` file in the folder ``base`` (``""`` or ``"a/b/"``)."""
    rules: list[_Rule] = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        if line.startswith("\\"):
            line = line[1:]
        folder_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        regex = re.compile(_glob_regex(line) + r"\Z")
        rules.append(_Rule(base, regex, negated, folder_only, anchored))
    return rules


def ignored(rules: list[_Rule], path: str, is_folder: bool) -> bool:
    """Whether ``path`` (relative to the walk's root) is ignored: the last rule that matches
    decides."""
    result = False
    name = path.rsplit("/", 1)[-1]
    for rule in rules:
        if rule.folder_only and not is_folder:
            continue
        if not path.startswith(rule.base):
            continue
        subject = path[len(rule.base) :] if rule.anchored else name
        if rule.regex.match(subject):
            result = not rule.negated
    return result


def walk_files(root: Path, limit: int = MAX_FILES) -> list[str]:
    """The files under ``root`` that ``.gitignore`` files do not leave out (relative paths)."""
    out: list[str] = []
    stack: list[tuple[str, list[_Rule]]] = [("", [])]
    while stack and len(out) <= limit:
        rel, inherited = stack.pop()
        folder = root / rel if rel else root
        rules = inherited
        try:
            text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
        else:
            rules = inherited + parse_gitignore(text, rel)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        folders: list[str] = []
        for entry in entries:
            path = rel + entry.name
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder and entry.name == ".git":
                continue
            if ignored(rules, path, is_folder):
                continue
            if is_folder:
                folders.append(path + "/")
            else:
                out.append(path)
        stack.extend((sub, rules) for sub in reversed(folders))
    return out[: limit + 1]


# ----------------------------------------------------------------------------- the cache


@dataclass
class ProjectFiles:
    """The files of the project at ``root``, listed on first use and kept (thread-safe)."""

    root: Path
    max_age: float = MAX_AGE
    _search: PathSearch | None = None
    _listed_at: float = 0.0
    truncated: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self) -> list[str]:
        """The project's files (relative to ``root``, ``/``-separated)."""
        return list(self._searcher().paths)

    def _searcher(self) -> PathSearch:
        with self._lock:
            fresh = time.monotonic() - self._listed_at < self.max_age
            if self._search is None or not fresh:
                found = git_files(self.root)
                if found is None:
                    found = walk_files(self.root)
                self.truncated = len(found) > MAX_FILES
                self._search = PathSearch(found[:MAX_FILES])
                self._listed_at = time.monotonic()
            return self._search

    @property
    def listed(self) -> bool:
        """The list is there (a search now costs no listing)."""
        return self._search is not None

    def search(self, query: str, limit: int = 50) -> list[str]:
        """The best ``limit`` files for ``query`` (see :mod:`pitui.agent.path_search`)."""
        searcher = self._searcher()
        with self._lock:  # PathSearch keeps the last query's candidates
            return searcher.search(query, limit)
