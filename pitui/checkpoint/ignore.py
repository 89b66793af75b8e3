"""What a checkpoint leaves out, as gitignore pattern files for our private git.

Two files, by precedence:

- ``exclude`` (given to ``git ls-files --exclude-from``: command-line precedence, so it wins over
  every ``.gitignore``): pitui's defaults and the ``checkpoint.exclude`` setting.
- ``base-exclude`` (our ``core.excludesFile``: the lowest precedence, so the project's own
  ``.gitignore`` files in the folder override it): the user's global git excludes, and when
  the folder is *inside* a repository, that repository's ``info/exclude`` and the ``.gitignore``
  files of the folders above ours, rewritten relative to our folder.

The project's own ``.gitignore`` files inside the folder are read by git itself.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from pitui.checkpoint.git import clean_environment
from pitui.checkpoint.settings import DEFAULT_EXCLUDES


def enclosing_repository(folder: Path) -> tuple[Path, Path] | None:
    """``(work tree top, git common dir)`` of the repository holding ``folder``, if any.

    Found by walking up for ``.git`` (a folder, or a file naming one as worktrees and
    submodules have); nothing is run and nothing is written.
    """
    current = folder
    while True:
        dot_git = current / ".git"
        if dot_git.is_dir():
            return current, dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                git_dir = (current / text[len("gitdir:") :].strip()).resolve()
                common = git_dir
                with contextlib.suppress(OSError):
                    common = (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
                return current, common
            return None
        if current.parent == current:
            return None
        current = current.parent


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def rebase_pattern(pattern: str, relative: tuple[str, ...]) -> str | None:
    """A gitignore pattern of a folder ``D`` rewritten for ``D/relative`` (None: it does not
    apply below that folder, or it names the folder itself or one above it).

    Patterns without a slash match at any depth and stay as they are; a leading ``**/`` does
    too; an anchored pattern must match ``relative`` segment by segment, and what is left is
    anchored at our folder. A ``**`` in the middle is kept as ``**/rest`` (it may then leave out
    a little more than git would).
    """
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    dir_only = body.endswith("/")
    core = body.rstrip("/")
    if not core:
        return None
    mark = "!" if negated else ""
    tail = "/" if dir_only else ""
    if "/" not in core or core.startswith("**/"):
        return pattern
    segments = core.lstrip("/").split("/")
    rest = list(relative)
    while segments and rest:
        head = segments[0]
        if head == "**":
            return mark + "/".join(segments) + tail
        if not fnmatch.fnmatchcase(rest[0], head):
            return None
        segments.pop(0)
        rest.pop(0)
    if not segments:
        return None  # it names our folder or one of its parents: we checkpoint it anyway
    if segments[0] == "**":
        return mark + "/".join(segments) + tail
    return mark + "/" + "/".join(segments) + tail


def _useful(lines: Iterable[str]) -> list[str]:
    out = []
    for line in lines:
        stripped = line.rstrip()
        if stripped and not stripped.startswith("#"):
            out.append(stripped)
    return out


def inherited_patterns(folder: Path) -> list[str]:
    """The enclosing repository's ignore rules that reach into ``folder`` from above."""
    found = enclosing_repository(folder)
    if found is None:
        return []
    top, common = found
    out: list[str] = []
    try:
        relative_parts = folder.relative_to(top).parts
    except ValueError:
        return []
    sources: list[tuple[Path, tuple[str, ...]]] = [(common / "info" / "exclude", relative_parts)]
    here = top
    for i in range(len(relative_parts)):
        sources.append((here / ".gitignore", relative_parts[i:]))
        here = here / relative_parts[i]
    for path, relative in sources:
        for pattern in _useful(_lines(path)):
            if not relative:
                out.append(pattern)
                continue
            rebased = rebase_pattern(pattern, relative)
            if rebased is not None:
                out.append(rebased)
    return out


def global_excludes_file() -> Path | None:
    """The user's global git excludes (``core.excludesFile``, else ``~/.config/git/ignore``)."""
    env = clean_environment({})
    env.pop("GIT_CONFIG_GLOBAL", None)
    try:
        out = subprocess.run(
            ["git", "config", "--global", "--path", "--get", "core.excludesFile"],
            capture_output=True,
            env=env,
            timeout=5,
            check=False,
        ).stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError):
        out = ""
    if out.strip():
        return Path(os.path.expanduser(out.strip()))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(base) / "git" / "ignore"


def exclude_text(settings_patterns: Iterable[str]) -> str:
    """The ``--exclude-from`` file: defaults, then the setting's patterns."""
    lines = ["# pitui checkpoints: defaults, then checkpoint.exclude", *DEFAULT_EXCLUDES]
    lines.extend(settings_patterns)
    return "\n".join(lines) + "\n"


def base_exclude_text(folder: Path) -> str:
    """The ``core.excludesFile`` file: the user's global excludes and inherited rules."""
    lines = ["# pitui checkpoints: global git excludes, then rules from enclosing folders"]
    global_file = global_excludes_file()
    if global_file is not None:
        lines.extend(_useful(_lines(global_file)))
    lines.extend(inherited_patterns(folder))
    return "\n".join(lines) + "\n"
