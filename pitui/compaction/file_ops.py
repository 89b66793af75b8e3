"""Which files a conversation read and changed (from read/write/edit tool calls), cumulatively."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitui.session.shapes import nested_calls, tool_calls

FILE_TOOLS = {"read": "read", "write": "written", "edit": "edited"}


@dataclass
class FileOps:
    read: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)

    def add(self, kind: str, path: str) -> None:
        bucket: list[str] = getattr(self, kind)
        if path not in bucket:
            bucket.append(path)

    def seed(self, details: Any) -> None:
        """Start from an earlier summary's ``details``.

        readFiles become read, modifiedFiles become edited."""
        if not isinstance(details, dict):
            return
        for path in details.get("readFiles") or []:
            if isinstance(path, str):
                self.add("read", path)
        for path in details.get("modifiedFiles") or []:
            if isinstance(path, str):
                self.add("edited", path)

    def scan(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            if message.get("role") == "assistant":
                for block in tool_calls(message):
                    self._call(block.get("name"), block.get("arguments"))
            elif message.get("role") == "toolResult":
                for call in nested_calls(message):
                    self._call(call.get("name"), call.get("arguments"))

    def _call(self, name: Any, arguments: Any) -> None:
        kind = FILE_TOOLS.get(name) if isinstance(name, str) else None
        if kind is None or not isinstance(arguments, dict):
            return
        path = arguments.get("path")
        if isinstance(path, str) and path:
            self.add(kind, path)

    def lists(self) -> tuple[list[str], list[str]]:
        """(readFiles, modifiedFiles): modified = edited ∪ written; read excludes modified."""
        modified = set(self.edited) | set(self.written)
        read_only = sorted((set(self.read) - modified), key=_js_key)
        return read_only, sorted(modified, key=_js_key)

    def to_json(self) -> dict[str, list[str]]:
        read_files, modified_files = self.lists()
        return {
            "read": list(self.read),
            "written": list(self.written),
            "edited": list(self.edited),
            "readFiles": read_files,
            "modifiedFiles": modified_files,
        }


def _js_key(text: str) -> bytes:
    """JavaScript's default sort compares UTF-16 code units."""
    return text.encode("utf-16-be", errors="surrogatepass")


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """Appended to a summary: ``<read-files>`` and ``<modified-files>`` blocks."""
    blocks = []
    if read_files:
        blocks.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        blocks.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(blocks) if blocks else ""
