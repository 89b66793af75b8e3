"""The tool protocol: declarations, argument validation, error conversion, cancellation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pitui.agent.tools import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    default_tools,
    execute,
    resolve_path,
    tools_by_name,
    validate_arguments,
)


class EchoTool(Tool):
    name = "echo"
    description = "Echo the arguments back."
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer"},
            "flag": {"type": "boolean"},
            "mode": {"type": "string"},
        },
        "required": ["text"],
    }

    def __init__(self, behaviour: str = "ok") -> None:
        self.behaviour = behaviour
        self.cleaned_up = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self.behaviour == "tool-error":
            raise ToolError("The thing could not be done.", details={"why": "test"})
        if self.behaviour == "crash":
            raise RuntimeError("boom")
        if self.behaviour == "hang":
            try:
                await asyncio.sleep(100)
            finally:
                self.cleaned_up = True
        return ToolResult.from_text(json.dumps(args, sort_keys=True))


def test_default_tools_order_and_names() -> None:
    assert [t.name for t in default_tools()] == ["read", "bash", "edit", "write"]
    assert list(tools_by_name()) == ["read", "bash", "edit", "write"]
    custom = EchoTool()
    assert tools_by_name([custom]) == {"echo": custom}


def test_declarations_match_pi_schemas(fixtures_dir: Path) -> None:
    """Names, parameter names, types and required lists match pi's tools in the fixture."""
    line = (fixtures_dir / "pi-v3-context-edit.jsonl").read_text().splitlines()[3]
    pi_tools = {t["name"]: t for t in json.loads(line)["message"]["toolsAdded"]}
    for tool in default_tools():
        ours = tool.declaration()
        assert set(ours) == {"name", "description", "parameters"}
        assert ours["description"]
        theirs = pi_tools[tool.name]["parameters"]
        assert ours["parameters"]["required"] == theirs["required"]
        assert {k: v["type"] for k, v in ours["parameters"]["properties"].items()} == {
            k: v["type"] for k, v in theirs["properties"].items()
        }
    edits = tools_by_name()["edit"].parameters["properties"]["edits"]["items"]
    assert edits["required"] == ["oldText", "newText"]


async def test_valid_arguments_reach_the_tool(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"text": "hi", "count": 3, "extra": 1}, ctx)
    assert not result.is_error
    assert json.loads(result.text) == {"text": "hi", "count": 3, "extra": 1}


async def test_missing_required_argument(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"count": 1}, ctx)
    assert result.is_error
    assert result.text == "Invalid arguments for the echo tool: missing required argument 'text'."


async def test_null_required_argument_counts_as_missing(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"text": None}, ctx)
    assert result.is_error
    assert "missing required argument 'text'" in result.text


async def test_wrong_type_required_argument(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"text": 5}, ctx)
    assert result.is_error
    assert result.text == (
        "Invalid arguments for the echo tool: argument 'text' must be a string, not a number."
    )


async def test_wrong_type_optional_argument(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"text": "x", "count": "many"}, ctx)
    assert result.is_error
    assert "argument 'count' must be an integer, not a string" in result.text
    result = await execute(EchoTool(), {"text": "x", "count": 1.5}, ctx)
    assert result.is_error


async def test_numbers_and_booleans_as_strings_are_coerced(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"text": "x", "count": "7", "flag": "true"}, ctx)
    assert not result.is_error
    assert json.loads(result.text) == {"text": "x", "count": 7, "flag": True}


async def test_null_optional_argument_is_dropped(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), {"text": "x", "mode": None}, ctx)
    assert json.loads(result.text) == {"text": "x"}


@pytest.mark.parametrize(
    ("args", "phrase"), [([1, 2], "an array"), (3, "a number"), ("{oops", "not valid JSON")]
)
async def test_arguments_must_be_an_object(ctx: ToolContext, args: Any, phrase: str) -> None:
    result = await execute(EchoTool(), args, ctx)
    assert result.is_error
    assert phrase in result.text


async def test_json_string_arguments_are_accepted(ctx: ToolContext) -> None:
    result = await execute(EchoTool(), '{"text": "hi"}', ctx)
    assert json.loads(result.text) == {"text": "hi"}


def test_nested_array_items_are_validated() -> None:
    schema = tools_by_name()["edit"].parameters
    with pytest.raises(Exception, match=r"missing required argument 'edits\[1\]\.newText'"):
        validate_arguments(
            schema, {"path": "a", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c"}]}
        )
    with pytest.raises(Exception, match=r"'edits\[0\]\.oldText' must be a string"):
        validate_arguments(schema, {"path": "a", "edits": [{"oldText": 1, "newText": "b"}]})
    # Models sometimes send the array as a JSON string.
    checked = validate_arguments(
        schema, {"path": "a", "edits": json.dumps([{"oldText": "a", "newText": "b"}])}
    )
    assert checked["edits"] == [{"oldText": "a", "newText": "b"}]


async def test_tool_error_becomes_error_result(ctx: ToolContext) -> None:
    result = await execute(EchoTool("tool-error"), {"text": "x"}, ctx)
    assert result.is_error
    assert result.content == [{"type": "text", "text": "The thing could not be done."}]
    assert result.details == {"why": "test"}


async def test_unexpected_exception_becomes_error_result(ctx: ToolContext) -> None:
    result = await execute(EchoTool("crash"), {"text": "x"}, ctx)
    assert result.is_error
    assert result.text == "The echo tool failed unexpectedly: RuntimeError: boom"


async def test_cancellation_propagates_after_cleanup(ctx: ToolContext) -> None:
    tool = EchoTool("hang")
    task = asyncio.create_task(execute(tool, {"text": "x"}, ctx))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tool.cleaned_up


def test_resolve_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cwd = tmp_path / "cwd"
    assert resolve_path("a/b.txt", cwd) == cwd / "a" / "b.txt"
    assert resolve_path("../x", cwd) == tmp_path / "x"
    assert resolve_path("/etc/hosts", cwd) == Path("/etc/hosts")
    assert resolve_path("~/notes.md", cwd) == tmp_path / "home" / "notes.md"
    # A leading @ is dropped only when the file exists without it.
    cwd.mkdir()
    (cwd / "real.txt").write_text("x")
    assert resolve_path("@real.txt", cwd) == cwd / "real.txt"
    assert resolve_path("@missing.txt", cwd) == cwd / "@missing.txt"
    with pytest.raises(ToolError, match="empty"):
        resolve_path("  ", cwd)


def test_tool_result_helpers() -> None:
    result = ToolResult(
        [{"type": "text", "text": "a"}, {"type": "image", "data": "", "mimeType": "image/png"}]
    )
    assert result.text == "a"
    assert ToolResult.error("bad").is_error


async def test_a_guard_can_refuse_and_a_failing_guard_refuses(tmp_path: Path) -> None:
    from pitui.agent.tools import WriteTool, execute
    from pitui.agent.tools.base import ToolContext, ToolResult

    seen: list[dict[str, object]] = []

    async def refuse(tool: object, args: dict[str, object]) -> ToolResult | None:
        seen.append(args)
        return ToolResult.error("not now")

    async def broken(tool: object, args: dict[str, object]) -> ToolResult | None:
        raise RuntimeError("boom")

    args = {"path": "x.txt", "content": "x"}
    for guard, text in ((refuse, "not now"), (broken, "checking it failed (RuntimeError)")):
        ctx = ToolContext(cwd=tmp_path, output_dir=tmp_path, guard=guard)
        result = await execute(WriteTool(), args, ctx)
        assert result.is_error and text in result.text
    assert not (tmp_path / "x.txt").exists()
    assert seen == [args]
