"""The built-in tools (read, bash, edit, write) and the protocol they follow.

Run a tool call with :func:`execute`, which validates the arguments and turns failures into
error results::

    tools = tools_by_name()
    result = await execute(tools["read"], {"path": "README.md"}, ctx)
"""

from __future__ import annotations

from collections.abc import Iterable

from pitui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    execute,
    resolve_path,
    validate_arguments,
)
from pitui.agent.tools.bash import (
    BashTool,
    CommandResult,
    OutputWindow,
    kill_running_commands,
    run_command,
)
from pitui.agent.tools.edit import EditTool
from pitui.agent.tools.read import ReadTool
from pitui.agent.tools.write import WriteTool

__all__ = [
    "BashTool",
    "CommandResult",
    "EditTool",
    "OutputWindow",
    "ReadTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "WriteTool",
    "default_tools",
    "execute",
    "kill_running_commands",
    "resolve_path",
    "run_command",
    "tools_by_name",
    "validate_arguments",
]


def default_tools() -> list[Tool]:
    """Fresh instances of the built-in tools, in pi's order: read, bash, edit, write."""
    return [ReadTool(), BashTool(), EditTool(), WriteTool()]


def tools_by_name(tools: Iterable[Tool] | None = None) -> dict[str, Tool]:
    """Map names to tools (the default tools unless ``tools`` is given), keeping their order."""
    return {tool.name: tool for tool in (default_tools() if tools is None else tools)}
