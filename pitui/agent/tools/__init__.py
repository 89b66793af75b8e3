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
    redact_result,
    resolve_path,
    validate_arguments,
)
from pitui.agent.tools.bash import (
    BashTool,
    CommandResult,
    OutputWindow,
    kill_running_commands,
    new_output_dir,
    remove_empty_output_dirs,
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
    "new_output_dir",
    "redact_result",
    "remove_empty_output_dirs",
    "resolve_path",
    "run_command",
    "tools_by_name",
    "validate_arguments",
]


def default_tools(read_line_numbers: bool = False) -> list[Tool]:
    """Fresh instances of the built-in tools, in pi's order: read, bash, edit, write
    (``read_line_numbers``: the ``tools.read.lineNumbers`` setting)."""
    return [ReadTool(read_line_numbers), BashTool(), EditTool(), WriteTool()]


def tools_by_name(tools: Iterable[Tool] | None = None) -> dict[str, Tool]:
    """Map names to tools (the default tools unless ``tools`` is given), keeping their order."""
    return {tool.name: tool for tool in (default_tools() if tools is None else tools)}
