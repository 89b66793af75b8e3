"""Approval modes: which tool calls run without asking, which are asked about, which are refused.

- ``auto`` (pi's behaviour): everything runs; nothing is recorded.
- ``ask``: before each call of a tool that can change files (``write``, ``edit``, ``bash`` and
  any tool not marked read-only) the user sees the command or the diff and answers yes, no,
  always for this command prefix (or file), or always for this tool in this session. Calls that
  match the ``allow`` lists in settings run without asking (``"bash": ["git status*"]``: every
  part of a compound command must match, and commands with substitutions or redirections
  never match). With nobody to ask (``-p``), the call is refused and the run says so.
- ``read-only``: those tools are refused with a message the model can read.

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
            return Decision(
                False,
                "read-only",
                message=(
                    f"The {tool} tool is not available: the user set the approval mode to "
                    "read-only, so nothing may change files or run commands. Do not retry; "
                    "describe the change you would make instead."
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
    if tool == "bash":
        prefix = command_prefix(subject) + "*"
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
