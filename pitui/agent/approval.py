"""Approval modes: which tool calls run without asking, which are asked about, which are refused.

- ``auto`` (pi's behaviour): everything runs; nothing is recorded.
- ``ask``: before each call of a tool that can change files (``write``, ``edit``, ``bash`` and
  any tool not marked read-only) the user sees the command or the diff and answers yes, no,
  always for this command prefix (or file), or always for this tool in this session. Calls that
  match the ``allow`` lists in settings run without asking (``"bash": ["git status*"]``: every
  part of a compound command must match, and commands with substitutions or redirections
  never match). With nobody to ask (``-p``), the call is refused and the run says so.
- ``read-only``: those tools are refused with a message the model can read, except commands
  known to only read (:func:`read_only_command`: ``ls``, ``cat``, ``grep``, ``git status``,
  ``git log``… with no option that writes or runs another program), so a read-only agent
  can look around. Read-only tools (``read``…) run in every mode.

For a destructive command (``rm``, ``chmod``, ``git reset``…, or a program that runs others,
such as ``sudo`` or ``xargs``: :func:`destructive_command`), "always" covers exactly that
command, never every command with its prefix.

Every decision in ``ask`` and ``read-only`` is recorded by the caller as a ``pitui.approval``
custom entry (see :class:`pitui.session.shapes.ApprovalData`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pitui.checkpoint.settings import ApprovalMode, ApprovalSettings

Answer = Literal["yes", "no", "prefix", "session"]
By = Literal["user", "allow-list", "grant", "read-only", "no-prompt"]

_SPLIT = re.compile(r"\|\||&&|[;&|\n]")
_UNSAFE = re.compile(r"`|\$\(|<\(|>\(|>|<<")
_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]*$")
FILE_TOOLS = frozenset({"write", "edit"})


@dataclass(frozen=True)
class ApprovalRequest:
    """What the user is asked about: the tool, what it would do (``subject``: the command or the
    path), a preview (the diff of a write or edit, or the command), and the prefix an "always"
    answer would allow."""

    tool: str
    call_id: str
    arguments: dict[str, Any]
    subject: str
    preview: tuple[str, ...] = ()
    prefix_rule: str = ""
    session_scope: str = ""
    exact: bool = False
    """The "always" answer allows exactly ``prefix_rule`` (a destructive command), not a
    pattern."""


Asker = Callable[[ApprovalRequest], Awaitable[Answer]]


@dataclass(frozen=True)
class Decision:
    allow: bool
    by: By
    rule: str = ""
    grant: Literal["prefix", "session"] | None = None
    message: str = ""
    """For a refusal: what the model reads instead of the tool's result."""

    def record(self, request: ApprovalRequest, mode: ApprovalMode) -> dict[str, Any]:
        """The ``data`` of the ``pitui.approval`` entry for this decision."""
        data: dict[str, Any] = {
            "tool": request.tool,
            "toolCallId": request.call_id,
            "decision": "allow" if self.allow else "deny",
            "by": self.by,
            "mode": mode,
            "subject": request.subject[:2000],
        }
        if self.rule:
            data["rule"] = self.rule
        if self.grant:
            data["grant"] = self.grant
        return data


def command_parts(command: str) -> list[str] | None:
    """The simple commands of a shell line, whitespace collapsed; None when it has command or
    process substitution, redirections or here-documents (never allowed without asking)."""
    if _UNSAFE.search(command):
        return None
    parts = [" ".join(p.split()) for p in _SPLIT.split(command)]
    parts = [p for p in parts if p]
    return parts or None


def command_prefix(command: str) -> str:
    """What "always for this prefix" allows: the program and, when it is a plain word, its
    subcommand (``git status --short`` → ``git status``; ``pytest -x tests`` → ``pytest``)."""
    first = (command_parts(command) or [command.strip()])[0]
    try:
        words = shlex.split(first)
    except ValueError:
        words = first.split()
    if not words:
        return first
    if len(words) > 1 and _WORD.match(words[1]) and "/" not in words[1]:
        return f"{words[0]} {words[1]}"
    return words[0]


def command_allowed(command: str, patterns: tuple[str, ...] | list[str]) -> str | None:
    """The pattern that allows ``command`` (every part must match one), or None."""
    parts = command_parts(command)
    if parts is None or not patterns:
        return None
    used = ""
    for part in parts:
        rule = next((p for p in patterns if fnmatch.fnmatchcase(part, p)), None)
        if rule is None:
            return None
        used = used or rule
    return used


READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "pwd", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find",
        "tree", "file", "stat", "du", "df", "which", "echo", "diff", "cmp", "cut", "nl",
        "basename", "dirname", "realpath", "readlink", "uname", "whoami", "id", "true",
        "sha256sum", "sha1sum", "md5sum", "jq",
    }
)  # fmt: skip
"""Programs that only read, whatever their arguments (but :data:`WRITING_OPTIONS`)."""
READ_ONLY_GIT = frozenset(
    {
        "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "grep",
        "describe", "shortlog", "cat-file", "merge-base", "rev-list", "whatchanged",
    }
)  # fmt: skip
"""``git`` subcommands that only read (``git branch``, ``tag``, ``remote``, ``stash`` and
``config`` only in their listing forms, see :func:`read_only_command`)."""
GIT_LISTING = {
    "branch": frozenset({"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose",
                         "--show-current", "--list", "-l", "--merged", "--no-merged"}),
    "tag": frozenset({"-l", "--list", "-n"}),
    "remote": frozenset({"-v", "--verbose"}),
}  # fmt: skip
WRITING_OPTIONS: dict[str, tuple[str, ...]] = {
    # An option that makes a reading program write a file or run another program (the option
    # itself, or ``--option=value``).
    "find": (
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
        "-fls",
    ),
    "rg": ("--pre",),
    "git": (
        "--output", "--ext-diff", "--open-files-in-pager", "-c", "--exec-path", "--git-dir",
        "--work-tree",
    ),
    "tree": ("--output",),
    "file": ("--compile",),
}  # fmt: skip
WRITING_SHORT = {"git": "O", "tree": "oR", "file": "C"}
"""Short options (alone or in a cluster such as ``-ao``) that write or run something:
``git grep -O`` opens a pager, ``tree -o`` writes its output, ``file -C`` compiles a file."""
DESTRUCTIVE_PROGRAMS = frozenset(
    {
        "rm", "rmdir", "unlink", "shred", "dd", "truncate", "chmod", "chown", "chgrp",
        "chattr", "mv", "kill", "killall", "pkill", "mkfs", "fdisk", "parted", "wipefs",
        "sudo", "doas", "su", "xargs", "env", "nohup", "timeout", "nice", "time", "exec",
        "eval", "command", "builtin", "sh", "bash", "zsh", "dash", "find", "sed", "perl",
    }
)  # fmt: skip
"""Programs whose "always" answer must not cover their whole prefix (they delete, overwrite,
change permissions, or run another program given as an argument)."""
DESTRUCTIVE_GIT = frozenset(
    {
        "reset", "clean", "checkout", "restore", "rm", "push", "rebase", "branch", "stash",
        "reflog", "gc", "prune", "filter-branch", "filter-repo", "update-ref", "tag",
        "switch", "worktree", "submodule", "am", "apply", "mv", "config",
    }
)  # fmt: skip


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part)
    except ValueError:
        return part.split()


def _git_reads(words: list[str]) -> bool:
    """``git SUB ...`` only reads (no option before the subcommand: ``-c``, ``-C``…)."""
    if len(words) < 2 or words[1].startswith("-"):
        return False
    sub, rest = words[1], words[2:]
    if sub in READ_ONLY_GIT:
        return True
    if sub in GIT_LISTING:
        return all(w in GIT_LISTING[sub] for w in rest)
    if sub == "stash":
        return rest == ["list"]
    if sub == "config":
        return bool(rest) and rest[0] in ("--get", "--get-all", "--list", "-l")
    return False


def _writes(program: str, arguments: list[str]) -> bool:
    """Does one of ``arguments`` make ``program`` write a file or run another program?"""
    forbidden = WRITING_OPTIONS.get(program, ())
    short = WRITING_SHORT.get(program, "")
    for word in arguments:
        if any(word == f or word.startswith(f + "=") for f in forbidden):
            return True
        cluster = word.startswith("-") and not word.startswith("--")
        if cluster and any(letter in word[1:] for letter in short):
            return True
    return False


def read_only_command(command: str) -> str | None:
    """What makes ``command`` read-only (``"ls"``, ``"git status"``), or None when any part of
    it may write or run something else. Every part of a compound command must be a known
    reading program; substitutions and redirections never are (see :func:`command_parts`)."""
    parts = command_parts(command)
    if parts is None:
        return None
    first = ""
    for part in parts:
        words = _words(part)
        if not words:
            return None
        program = words[0]
        name = program
        if program == "git":
            if not _git_reads(words):
                return None
            name = f"git {words[1]}"
        elif program not in READ_ONLY_PROGRAMS:
            return None
        if _writes(program, words[1:]):
            return None
        first = first or name
    return first or None


def destructive_command(command: str) -> bool:
    """True when some part of ``command`` deletes, overwrites or changes permissions, or runs
    another program (see :data:`DESTRUCTIVE_PROGRAMS`); a command whose parts cannot be told
    apart (substitutions, redirections) counts as one."""
    parts = command_parts(command)
    if parts is None:
        return True
    for part in parts:
        words = _words(part)
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        if program in DESTRUCTIVE_PROGRAMS or program.startswith("mkfs."):
            return True
        if "=" in program:
            return True  # VAR=value cmd: judged as the command it runs, so never by prefix
        if program == "git":
            sub = next((w for w in words[1:] if not w.startswith("-")), "")
            if sub in DESTRUCTIVE_GIT or (words[1:2] and words[1].startswith("-")):
                return True
    return False


def relative_subject(path: str, cwd: Path) -> str:
    full = os.path.normpath(os.path.join(os.fspath(cwd), os.path.expanduser(path.strip())))
    rel = os.path.relpath(full, cwd)
    return full if rel.startswith("..") else rel


def path_allowed(path: str, patterns: tuple[str, ...] | list[str]) -> str | None:
    return next((p for p in patterns if fnmatch.fnmatchcase(path, p)), None)


def subject_of(tool: str, arguments: dict[str, Any], cwd: Path) -> str:
    if tool == "bash":
        return str(arguments.get("command", ""))
    if "path" in arguments and isinstance(arguments["path"], str):
        return relative_subject(arguments["path"], cwd)
    return " ".join(f"{k}={v!r}" for k, v in list(arguments.items())[:4])[:500]


def session_scope(tool: str) -> str:
    """What "always for this session" covers: all file edits (write and edit), or the tool."""
    return "files" if tool in FILE_TOOLS else tool


@dataclass
class ApprovalPolicy:
    """Decides about tool calls for one agent session."""

    settings: ApprovalSettings
    asker: Asker | None = None
    interactive: bool = True
    prefix_grants: dict[str, list[str]] = field(default_factory=dict)
    exact_grants: dict[str, set[str]] = field(default_factory=dict)
    session_grants: set[str] = field(default_factory=set)

    @property
    def mode(self) -> ApprovalMode:
        return self.settings.mode

    def needs_decision(self, tool_name: str, read_only: bool) -> bool:
        return self.mode != "auto" and not read_only

    def _allowed_by_rules(self, request: ApprovalRequest) -> tuple[By, str] | None:
        tool = request.tool
        listed = self.settings.allow.get(tool, ())
        granted = self.prefix_grants.get(tool, [])
        if tool == "bash":
            rule = command_allowed(request.subject, listed)
            if rule:
                return "allow-list", rule
            rule = command_allowed(request.subject, granted)
            if rule:
                return "grant", rule
            exact = request.subject.strip()
            if exact in self.exact_grants.get(tool, ()):
                return "grant", exact
        else:
            rule = path_allowed(request.subject, listed)
            if rule:
                return "allow-list", rule
            rule = path_allowed(request.subject, granted)
            if rule:
                return "grant", rule
        if request.session_scope in self.session_grants:
            return "grant", f"{request.session_scope} (this session)"
        return None

    async def decide(self, request: ApprovalRequest) -> Decision:
        """The decision for a call that :meth:`needs_decision` (asks the user when it must)."""
        tool = request.tool
        if self.mode == "read-only":
            reading = read_only_command(request.subject) if tool == "bash" else None
            if reading is not None:
                return Decision(True, "read-only", rule=f"read-only command ({reading})")
            return Decision(
                False,
                "read-only",
                message=(
                    f"This {tool} call was not run: the user set the approval mode to "
                    "read-only, so nothing may change files or run commands other than "
                    "read-only ones (ls, cat, grep, find, git status, git log, git diff…, "
                    "without redirections or substitutions). Do not retry it; describe the "
                    "change you would make instead."
                ),
            )
        matched = self._allowed_by_rules(request)
        if matched is not None:
            return Decision(True, matched[0], rule=matched[1])
        if self.asker is None or not self.interactive:
            return Decision(
                False,
                "no-prompt",
                message=(
                    f"This {tool} call was not run: the approval mode is ask and there is no one "
                    "to ask in this run (print mode). Do not retry; tell the user what you "
                    "wanted to do, or they can allow it in settings (allow) or use --approve."
                ),
            )
        answer = await self.asker(request)
        if answer == "no":
            return Decision(
                False,
                "user",
                message=(
                    f"The user declined this {tool} call. Do not retry it; ask the user how to "
                    "proceed."
                ),
            )
        if answer == "prefix" and request.prefix_rule:
            if request.exact:
                self.exact_grants.setdefault(tool, set()).add(request.prefix_rule)
            else:
                self.prefix_grants.setdefault(tool, []).append(request.prefix_rule)
            return Decision(True, "user", rule=request.prefix_rule, grant="prefix")
        if answer == "session":
            self.session_grants.add(request.session_scope)
            return Decision(True, "user", rule=request.session_scope, grant="session")
        return Decision(True, "user")


def build_request(
    tool: str, call_id: str, arguments: dict[str, Any], cwd: Path, preview: tuple[str, ...]
) -> ApprovalRequest:
    subject = subject_of(tool, arguments, cwd)
    exact = False
    if tool == "bash":
        exact = destructive_command(subject)
        prefix = subject.strip() if exact else command_prefix(subject) + "*"
    elif "path" in arguments:
        prefix = subject
    else:
        prefix = ""
    return ApprovalRequest(
        tool=tool,
        call_id=call_id,
        arguments=arguments,
        subject=subject,
        preview=preview,
        prefix_rule=prefix,
        session_scope=session_scope(tool),
        exact=exact,
    )


def preview_lines(tool: str, arguments: dict[str, Any], cwd: Path) -> tuple[str, ...]:
    """What the call would do, as diff-like lines (reads the file: call from a thread)."""
    from pitui.agent.tools.edit import apply_edits, unified_diff

    if tool == "bash":
        return tuple(str(arguments.get("command", "")).splitlines() or [""])
    path_text = arguments.get("path")
    if not isinstance(path_text, str):
        return ()
    path = Path(os.path.normpath(os.path.join(os.fspath(cwd), os.path.expanduser(path_text))))
    try:
        before = path.read_bytes().decode("utf-8", "replace") if path.is_file() else None
    except OSError:
        before = None
    if tool == "write":
        after = str(arguments.get("content", ""))
        if before is None:
            lines = after.splitlines()
            return (f"new file, {len(lines)} line(s)", *(f"+{line}" for line in lines[:2000]))
        diff = unified_diff(before, after, str(path)).splitlines()
        return tuple(diff[2:]) or ("(no change)",)
    if tool == "edit":
        edits = arguments.get("edits") or []
        if before is not None:
            try:
                body = before.removeprefix("\ufeff")
                edited, _ = apply_edits(body, edits, path)
                return tuple(unified_diff(body, edited, str(path)).splitlines()[2:])
            except Exception:
                pass
        out: list[str] = []
        for edit in edits:
            if isinstance(edit, dict):
                out += [f"-{line}" for line in str(edit.get("oldText", "")).splitlines()]
                out += [f"+{line}" for line in str(edit.get("newText", "")).splitlines()]
        return tuple(out)
    return ()
