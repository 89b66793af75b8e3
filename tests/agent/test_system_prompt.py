"""The system prompt as sections, AGENTS.md discovery, and the system messages that record it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from pitui.agent.system_prompt import (
    PREAMBLE,
    build_sections,
    find_context_files,
    system_patch,
)
from pitui.session.system_prompt import replay_system_messages, system_message_text

READ = {
    "name": "read",
    "description": "Read a file.\nSupports offset and limit.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}
BASH = {
    "name": "bash",
    "description": "Run a shell command.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
}
EDIT = {
    "name": "edit",
    "description": "Edit a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _under(paths: list[Path], root: Path) -> list[Path]:
    """Context files inside ``root`` (ignore any the machine has above the temp folder)."""
    return [p for p in paths if p.is_relative_to(root.resolve())]


# ---------------------------------------------------------------------------------------------
# build_sections


def test_build_sections_order_and_wrapping(project: Path) -> None:
    (project / "AGENTS.md").write_text("Use tabs.\n", encoding="utf-8")
    sections = build_sections(project, [READ, BASH])
    assert list(sections) == ["preamble", "tools", "rules", "project_context", "cwd"]
    assert sections["preamble"] == PREAMBLE
    assert not sections["preamble"].startswith("<")
    for name in ("tools", "rules", "project_context", "cwd"):
        value = sections[name]
        assert value.startswith(f"<{name}>\n"), name
        assert value.endswith(f"\n</{name}>"), name
    assert sections["cwd"] == f"<cwd>\n{os.fspath(project)}\n</cwd>"
    assert sections["tools"] == (
        "<tools>\n- read: Read a file.\n- bash: Run a shell command.\n</tools>"
    )
    assert "Use tabs." in sections["project_context"]
    assert str(project / "AGENTS.md") in sections["project_context"]


def test_build_sections_without_tools_or_context_files(project: Path) -> None:
    sections = build_sections(project, [])
    assert "tools" not in sections
    # No AGENTS.md inside the temp tree; one above it would still be legitimate.
    if not find_context_files(project):
        assert list(sections) == ["preamble", "rules", "cwd"]
    names = list(sections)
    assert (names[0], names[-1]) == ("preamble", "cwd")


def test_section_names_follow_pi_rules(project: Path) -> None:
    for name in build_sections(project, [READ]):
        assert re.fullmatch(r"[a-z][a-z0-9_-]*", name)


# ---------------------------------------------------------------------------------------------
# AGENTS.md / CLAUDE.md discovery


def test_context_files_from_cwd_up_outermost_first(tmp_path: Path) -> None:
    outer = tmp_path / "repo"
    middle = outer / "pkg"
    inner = middle / "sub"
    inner.mkdir(parents=True)
    (outer / "AGENTS.md").write_text("outer agents", encoding="utf-8")
    (outer / "CLAUDE.md").write_text("outer claude", encoding="utf-8")
    (middle / "CLAUDE.md").write_text("middle claude", encoding="utf-8")
    (inner / "AGENTS.md").write_text("inner agents", encoding="utf-8")
    found = _under(find_context_files(inner), tmp_path)
    assert found == [
        (outer / "AGENTS.md").resolve(),
        (middle / "CLAUDE.md").resolve(),
        (inner / "AGENTS.md").resolve(),
    ]


def test_agents_md_preferred_over_claude_md(project: Path) -> None:
    (project / "CLAUDE.md").write_text("claude", encoding="utf-8")
    (project / "AGENTS.md").write_text("agents", encoding="utf-8")
    assert _under(find_context_files(project), project) == [(project / "AGENTS.md").resolve()]
    context = build_sections(project, [])["project_context"]
    assert "agents" in context
    assert "claude" not in context


def test_claude_md_used_when_alone(project: Path) -> None:
    (project / "CLAUDE.md").write_text("claude rules", encoding="utf-8")
    assert _under(find_context_files(project), project) == [(project / "CLAUDE.md").resolve()]
    assert "claude rules" in build_sections(project, [])["project_context"]


def test_context_files_below_cwd_are_ignored(project: Path) -> None:
    child = project / "child"
    child.mkdir()
    (child / "AGENTS.md").write_text("child", encoding="utf-8")
    assert _under(find_context_files(project), project) == []


def test_project_context_joins_files_outermost_first(tmp_path: Path) -> None:
    outer = tmp_path / "repo"
    inner = outer / "pkg"
    inner.mkdir(parents=True)
    (outer / "AGENTS.md").write_text("OUTER", encoding="utf-8")
    (inner / "AGENTS.md").write_text("INNER", encoding="utf-8")
    (inner / "CLAUDE.md").write_text("IGNORED", encoding="utf-8")
    context = build_sections(inner, [])["project_context"]
    assert context.index("OUTER") < context.index("INNER")
    assert "IGNORED" not in context


def test_empty_context_file_adds_no_section(project: Path) -> None:
    (project / "AGENTS.md").write_text("  \n", encoding="utf-8")
    sections = build_sections(project, [])
    assert str(project / "AGENTS.md") not in sections.get("project_context", "")


# ---------------------------------------------------------------------------------------------
# system_patch


def _wanted(project: Path, tools: list[dict[str, Any]]) -> dict[str, str]:
    return build_sections(project, tools)


def test_patch_without_current_state_holds_everything(project: Path) -> None:
    sections = _wanted(project, [READ, BASH])
    message = system_patch(None, sections, [READ, BASH])
    assert message is not None
    assert message["role"] == "system"
    assert message["content"] == ""
    assert message["sections"] == sections
    assert list(message["sections"]) == list(sections)
    assert message["toolsAdded"] == [READ, BASH]
    assert "toolsRemoved" not in message
    assert isinstance(message["timestamp"], int)


def test_patch_without_current_state_and_no_tools(project: Path) -> None:
    message = system_patch(None, {"preamble": "P"}, [])
    assert message is not None
    assert message["sections"] == {"preamble": "P"}
    assert "toolsAdded" not in message


def test_patch_does_not_alias_inputs(project: Path) -> None:
    sections = {"preamble": "P"}
    tools = [READ]
    message = system_patch(None, sections, tools)
    assert message is not None
    assert message["sections"] is not sections
    assert message["toolsAdded"] is not tools


def _first_and_current(
    project: Path, tools: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    first = system_patch(None, _wanted(project, tools), tools)
    assert first is not None
    current = replay_system_messages([first])
    assert current is not None
    return first, current


def test_unchanged_gives_none(project: Path) -> None:
    _, current = _first_and_current(project, [READ, BASH])
    assert system_patch(current, _wanted(project, [READ, BASH]), [READ, BASH]) is None


def test_changed_section_only(project: Path) -> None:
    _, current = _first_and_current(project, [READ])
    sections = dict(_wanted(project, [READ]))
    sections["rules"] = "<rules>\n- Be brief.\n</rules>"
    patch = system_patch(current, sections, [READ])
    assert patch is not None
    assert patch["sections"] == {"rules": "<rules>\n- Be brief.\n</rules>"}
    assert "toolsAdded" not in patch
    assert "toolsRemoved" not in patch
    assert patch["content"] == ""


def test_added_section(project: Path) -> None:
    _, current = _first_and_current(project, [READ])
    (project / "AGENTS.md").write_text("New rules.", encoding="utf-8")
    sections = _wanted(project, [READ])
    patch = system_patch(current, sections, [READ])
    assert patch is not None
    assert patch["sections"] == {"project_context": sections["project_context"]}


def test_removed_section_is_null(project: Path) -> None:
    _, current = _first_and_current(project, [READ])
    sections = dict(_wanted(project, [READ]))
    del sections["rules"]
    patch = system_patch(current, sections, [READ])
    assert patch is not None
    assert patch["sections"] == {"rules": None}


def test_tool_removed(project: Path) -> None:
    _, current = _first_and_current(project, [READ, BASH])
    sections = _wanted(project, [READ])  # the tools section changes too
    patch = system_patch(current, sections, [READ])
    assert patch is not None
    assert patch["toolsRemoved"] == [{"name": "bash"}]
    assert "toolsAdded" not in patch
    assert patch["sections"] == {"tools": sections["tools"]}


def test_tool_added(project: Path) -> None:
    _, current = _first_and_current(project, [READ])
    patch = system_patch(current, _wanted(project, [READ, EDIT]), [READ, EDIT])
    assert patch is not None
    assert patch["toolsAdded"] == [EDIT]
    assert "toolsRemoved" not in patch


def test_tool_redefined_is_removed_then_added(project: Path) -> None:
    _, current = _first_and_current(project, [READ, BASH])
    new_bash = dict(BASH, parameters={"type": "object", "properties": {"cmd": {"type": "string"}}})
    sections = _wanted(project, [READ, new_bash])
    patch = system_patch(current, sections, [READ, new_bash])
    assert patch is not None
    assert patch["toolsRemoved"] == [{"name": "bash"}]
    assert patch["toolsAdded"] == [new_bash]
    assert "sections" not in patch  # first description line unchanged


def test_only_tools_changed_has_no_sections_key(project: Path) -> None:
    _, current = _first_and_current(project, [READ])
    sections = _wanted(project, [READ])
    patch = system_patch(current, sections, [READ, EDIT])  # sections kept as they were
    assert patch is not None
    assert "sections" not in patch
    assert patch["toolsAdded"] == [EDIT]


# ---------------------------------------------------------------------------------------------
# Replay gives back exactly what was wanted


def _tools_by_name(message: dict[str, Any]) -> dict[str, Any]:
    return {t["name"]: t for t in message["toolsAdded"]}


CHANGES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("unchanged", [READ, BASH], [READ, BASH]),
    ("tool removed", [READ, BASH, EDIT], [READ, EDIT]),
    ("tool added", [READ], [READ, BASH, EDIT]),
    ("all tools removed", [READ, BASH], []),
    ("first tools", [], [READ]),
    (
        "tool redefined",
        [READ, BASH],
        [READ, dict(BASH, description="Run a command in bash.")],
    ),
]


@pytest.mark.parametrize(("label", "before", "after"), CHANGES, ids=[c[0] for c in CHANGES])
def test_replay_of_first_and_patch_gives_wanted_state(
    project: Path, label: str, before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    first, current = _first_and_current(project, before)
    wanted = _wanted(project, after)
    patch = system_patch(current, wanted, after)
    messages = [first] if patch is None else [first, patch]
    replayed = replay_system_messages(messages)
    assert replayed is not None
    assert replayed["sections"] == wanted
    assert _tools_by_name(replayed) == {t["name"]: t for t in after}
    assert len(replayed["toolsAdded"]) == len(after)


def test_replay_with_section_changes_and_removal(project: Path) -> None:
    first, current = _first_and_current(project, [READ])
    wanted = dict(_wanted(project, [READ]))
    wanted["rules"] = "<rules>\n- New.\n</rules>"
    del wanted["cwd"]
    patch = system_patch(current, wanted, [READ])
    assert patch is not None
    replayed = replay_system_messages([first, patch])
    assert replayed is not None
    assert replayed["sections"] == wanted
    # A patched section keeps its place, so the prompt text keeps the order.
    assert list(replayed["sections"]) == list(wanted)
    assert system_message_text(replayed) == "\n\n".join(wanted.values())


def test_replay_of_a_chain_of_patches(project: Path) -> None:
    states = [[READ], [READ, BASH], [BASH], [BASH, EDIT], [BASH, dict(EDIT, description="E2")]]
    messages: list[dict[str, Any]] = []
    for tools in states:
        current = replay_system_messages(messages)
        patch = system_patch(current, _wanted(project, tools), tools)
        if patch is not None:
            messages.append(patch)
        replayed = replay_system_messages(messages)
        assert replayed is not None
        assert replayed["sections"] == _wanted(project, tools)
        assert _tools_by_name(replayed) == {t["name"]: t for t in tools}
    # Then nothing more to say.
    final = replay_system_messages(messages)
    assert system_patch(final, _wanted(project, states[-1]), states[-1]) is None


def test_redefined_tool_moves_to_the_end_on_replay(project: Path) -> None:
    # pi 1.6 semantics: remove + add in one message re-inserts the tool at the end.
    first, current = _first_and_current(project, [BASH, READ])
    new_bash = dict(BASH, description="Run a command in bash.")
    patch = system_patch(current, _wanted(project, [new_bash, READ]), [new_bash, READ])
    assert patch is not None
    replayed = replay_system_messages([first, patch])
    assert replayed is not None
    assert [t["name"] for t in replayed["toolsAdded"]] == ["read", "bash"]
    assert replayed["toolsAdded"][1] == new_bash
