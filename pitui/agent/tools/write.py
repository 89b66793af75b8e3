"""The ``write`` tool: create or overwrite a file with UTF-8 text, making parent folders.

Only regular files are written: a FIFO, a device or a socket is refused (opening a FIFO would
wait for a reader forever). The write runs in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from pitui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    os_error,
    resolve_path,
)
from pitui.files import NotRegularFileError, check_regular, open_regular


def not_regular(exc: NotRegularFileError, what: str) -> ToolError:
    """``PATH is a named pipe (FIFO), not a regular file; <what>.`` for the model."""
    return ToolError(f"{exc.path} is {exc.kind}, not a regular file; {what}.")


def write_text_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (parents created); raise :class:`ToolError` on failure.

    Never blocks on a FIFO and never writes to anything but a regular file."""
    if path.is_dir():
        raise ToolError(f"{path} is a directory; give the path of a file to write.")
    try:
        check_regular(path)
    except NotRegularFileError as exc:
        raise not_regular(exc, "write only writes regular files") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ToolError(
            f"Could not create the folder {path.parent}: a file is in the way."
        ) from None
    except OSError as exc:
        raise os_error("create the folder", path.parent, exc) from None
    try:
        fd, _ = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    except NotRegularFileError as exc:
        raise not_regular(exc, "write only writes regular files") from None
    except OSError as exc:
        raise os_error("write", path, exc) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise os_error("write", path, exc) from None


class WriteTool(Tool):
    name = "write"
    description = (
        "Write content to a file. Creates the file if it does not exist, overwrites if it does. "
        "Parent folders are created as needed."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file to write (relative or absolute)",
            },
            "content": {"type": "string", "description": "Content to write to the file"},
        },
        "required": ["path", "content"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(args["path"], ctx.cwd)
        data = args["content"].encode("utf-8", "replace")
        await asyncio.to_thread(write_text_file, path, data)
        return ToolResult.from_text(
            f"Successfully wrote {len(data)} bytes to {path}",
            details={"path": str(path), "bytes": len(data)},
        )
