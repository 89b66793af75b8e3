"""The system prompt as named sections, and the ``system`` messages that record it in a session.

The first run of a session stores one system message with every section and every tool
declaration; later runs store a patch only when something changed (a section's text, a removed
section as ``null``, tools added or removed). Replaying them (the session core's projection)
gives exactly what the model was sent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pitui.session.ids import now_ms

PREAMBLE = (
    "You are pitui, a coding agent working in the user's terminal. You help with software "
    "engineering tasks: reading and changing code, running commands, and explaining what you "
    "find. Use the tools to inspect files before changing them, keep changes focused, and say "
    "briefly what you did. Show file paths clearly."
)
RULES = (
    "- Use read to look at files instead of cat or sed.\n"
    "- Use edit for precise changes; the old text must match the file exactly.\n"
    "- Use write only for new files or complete rewrites.\n"
    "- Commands run in the working directory; prefer non-interactive flags.\n"
    "- Be concise."
)
CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_CONTEXT_FILE_BYTES = 64 * 1024


def _wrap(name: str, text: str) -> str:
    return text if name == "preamble" else f"<{name}>\n{text}\n</{name}>"


def tools_section(declarations: list[dict[str, Any]]) -> str:
    lines = []
    for d in declarations:
        summary = (str(d.get("description") or "").splitlines() or [""])[0]
        lines.append(f"- {d['name']}: {summary}")
    return "\n".join(lines)


def find_context_files(cwd: Path) -> list[Path]:
    """AGENTS.md / CLAUDE.md from the filesystem root down to ``cwd`` (outermost first)."""
    found: list[Path] = []
    current = cwd.resolve()
    chain = [current, *current.parents]
    for folder in reversed(chain):
        for name in CONTEXT_FILES:
            candidate = folder / name
            if candidate.is_file():
                found.append(candidate)
                break  # one per folder: AGENTS.md wins over CLAUDE.md
    return found


def project_context(cwd: Path) -> str | None:
    parts: list[str] = []
    for path in find_context_files(cwd):
        try:
            data = path.read_bytes()[:MAX_CONTEXT_FILE_BYTES]
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace").strip()
        if text:
            parts.append(f"## {path}\n\n{text}")
    return "\n\n".join(parts) if parts else None


def build_sections(cwd: Path, declarations: list[dict[str, Any]]) -> dict[str, str]:
    """Every section of the prompt for this directory and tool set, in prompt order."""
    sections: dict[str, str] = {"preamble": PREAMBLE}
    if declarations:
        sections["tools"] = _wrap("tools", tools_section(declarations))
    sections["rules"] = _wrap("rules", RULES)
    context = project_context(cwd)
    if context:
        sections["project_context"] = _wrap("project_context", context)
    sections["cwd"] = _wrap("cwd", os.fspath(cwd))
    return sections


def system_patch(
    current: dict[str, Any] | None, sections: dict[str, str], declarations: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The system message to append so that replay gives ``sections`` and ``declarations``.

    ``current`` is the replayed system message of the branch (None when there is none yet):
    then the message holds everything. None when nothing changed.
    """
    if current is None:
        message: dict[str, Any] = {"role": "system", "content": "", "sections": dict(sections)}
        if declarations:
            message["toolsAdded"] = list(declarations)
        message["timestamp"] = now_ms()
        return message
    old_sections = current.get("sections") or {}
    patch: dict[str, Any] = {}
    for name, text in sections.items():
        if old_sections.get(name) != text:
            patch[name] = text
    for name in old_sections:
        if name not in sections:
            patch[name] = None
    old_tools = {t.get("name"): t for t in current.get("toolsAdded") or [] if isinstance(t, dict)}
    new_tools = {d["name"]: d for d in declarations}
    removed = [
        {"name": name}
        for name, tool in old_tools.items()
        if name not in new_tools or new_tools[name] != tool
    ]
    added = [d for name, d in new_tools.items() if old_tools.get(name) != d]
    if not patch and not removed and not added:
        return None
    message = {"role": "system", "content": ""}
    if patch:
        message["sections"] = patch
    if added:
        message["toolsAdded"] = added
    if removed:
        message["toolsRemoved"] = removed
    message["timestamp"] = now_ms()
    return message
