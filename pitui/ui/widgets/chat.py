"""The chat pane: the active branch as blocks, with the reply being streamed at the bottom.

Blocks are built from store entries (the store is the truth); the reply in progress is fed to a
``MarkdownStream`` chunk by chunk and replaced by the stored block when it ends. Only a window of
the newest blocks is mounted; older ones load on demand.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, ClassVar

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Markdown, Static

from pitui.agent.events import MessageDelta, MessageEnd, MessageStart, RunEnded, ToolEnd
from pitui.session.entries import message_text
from pitui.session.node import Node
from pitui.session.oneline import tool_call_text
from pitui.ui.messages import AgentUpdate, EntryAppended, LeafMoved, SessionSwitched
from pitui.ui.sanitize import strip_escapes, tool_output_text

if TYPE_CHECKING:
    from textual.widgets._markdown import MarkdownStream

    from pitui.ui.app import PituiApp

WINDOW = 150  # blocks mounted at once
PREVIEW_LINES = 6


def _text_blocks(content: Any) -> str:
    return message_text({"content": content}, "\n")


class UserBlock(Static):
    DEFAULT_CSS: ClassVar[str] = """
    UserBlock { margin: 1 0 0 0; padding: 0 1; border-left: thick $primary; }
    """


class AssistantBlock(Markdown):
    DEFAULT_CSS: ClassVar[str] = """
    AssistantBlock { margin: 1 0 0 0; padding: 0 1; }
    """


class NoteBlock(Static):
    DEFAULT_CSS: ClassVar[str] = """
    NoteBlock { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    NoteBlock.-error { color: $error; }
    """


class ToolBlock(Collapsible):
    DEFAULT_CSS: ClassVar[str] = """
    ToolBlock { margin: 0; padding: 0; border: none; }
    ToolBlock.-error CollapsibleTitle { color: $error; }
    """


def tool_result_widget(text: str) -> Static:
    return Static(Content.from_rich_text(tool_output_text(text)), markup=False)


class ChatView(VerticalScroll):
    """Renders ``app.store``'s active branch; streams the reply in progress."""

    DEFAULT_CSS: ClassVar[str] = """
    ChatView { height: 1fr; padding: 0 1; }
    ChatView > #load-earlier { width: 100%; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._stream: MarkdownStream | None = None
        self._streaming: AssistantBlock | None = None
        self._thinking: Static | None = None
        self._shown_from = 0
        self._tool_widgets: dict[str, Collapsible] = {}
        self._calls: dict[str, dict[str, Any]] = {}
        self._events: asyncio.Queue[object] = asyncio.Queue()

    @property
    def pitui(self) -> PituiApp:
        return self.app  # type: ignore[return-value]

    def on_mount(self) -> None:
        self.anchor()
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)
        self.rebuild()
        self.run_worker(self._consume(), group="chat-stream", exclusive=True)

    async def _consume(self) -> None:
        """One consumer keeps stream events in order (deltas, then the stored message)."""
        while True:
            item = await self._events.get()
            if isinstance(item, EntryAppended):
                self._append_entry(item.entry_id)
            else:
                await self._on_agent_event(item)

    # ------------------------------------------------------------------ building

    def visible_entries(self) -> list[Node]:
        return [n for n in self.pitui.store.path_to() if self._shows(n)]

    @staticmethod
    def _shows(node: Node) -> bool:
        if node.type in ("compaction", "branch_summary", "custom_message"):
            return True
        return node.type == "message" and node.role in (
            "user",
            "assistant",
            "toolResult",
            "bashExecution",
            "custom",
        )

    def rebuild(self) -> None:
        """Re-render the active branch (newest window of blocks)."""
        self._end_stream()
        self.remove_children()
        self._tool_widgets.clear()
        self._calls.clear()
        entries = self.visible_entries()
        self._shown_from = max(0, len(entries) - WINDOW)
        widgets: list[Widget] = []
        if self._shown_from:
            widgets.append(
                Button(f"Show {self._shown_from} earlier entries", id="load-earlier", compact=True)
            )
        for node in entries[self._shown_from :]:
            widgets.extend(self.blocks_for(node))
        self.mount_all(widgets)
        self.scroll_end(animate=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "load-earlier":
            event.stop()
            entries = self.visible_entries()
            start = max(0, self._shown_from - WINDOW)
            older: list[Widget] = []
            for node in entries[start : self._shown_from]:
                older.extend(self.blocks_for(node))
            self._shown_from = start
            event.button.label = f"Show {start} earlier entries"
            self.mount_all(older, after=event.button)
            if start == 0:
                event.button.remove()

    def blocks_for(self, node: Node) -> list[Widget]:
        """The widgets for one entry."""
        store = self.pitui.store
        entry = store.data(node)
        if node.type == "compaction":
            tokens = entry.get("tokensBefore")
            title = f"Compacted from {tokens:,} tokens" if isinstance(tokens, int) else "Compacted"
            summary = Markdown(strip_escapes(str(entry.get("summary") or "")))
            return [Collapsible(summary, title=title, collapsed=True, classes="compaction")]
        if node.type == "branch_summary":
            summary = Markdown(strip_escapes(str(entry.get("summary") or "")))
            return [Collapsible(summary, title="Branch summary", collapsed=True)]
        if node.type == "custom_message":
            if entry.get("display") is False:
                return []
            text = _text_blocks(entry.get("content"))
            return [NoteBlock(Content(f"[{entry.get('customType')}] {strip_escapes(text)}"))]
        message = entry.get("message") or {}
        role = message.get("role")
        if role == "user":
            return [UserBlock(Content(strip_escapes(_text_blocks(message.get("content")))))]
        if role == "assistant":
            return self._assistant_blocks(message)
        if role == "toolResult":
            return self._tool_result_blocks(message)
        if role == "bashExecution":
            output = str(message.get("output") or "")
            title = f"$ {strip_escapes(str(message.get('command', '')))}"
            return [ToolBlock(tool_result_widget(output), title=title, collapsed=True)]
        if role == "custom":
            text = _text_blocks(message.get("content"))
            return [NoteBlock(Content(strip_escapes(text)))]
        return []

    def _assistant_blocks(self, message: dict[str, Any]) -> list[Widget]:
        out: list[Widget] = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "thinking" and block.get("thinking"):
                thinking = Static(Content(strip_escapes(str(block["thinking"]))), markup=False)
                out.append(Collapsible(thinking, title="Thinking", collapsed=True))
            elif kind == "text" and block.get("text"):
                out.append(AssistantBlock(strip_escapes(str(block["text"]))))
            elif kind == "toolCall":
                self._calls[str(block.get("id"))] = block
        stop = message.get("stopReason")
        if stop == "error":
            error = strip_escapes(str(message.get("errorMessage") or "error"))
            out.append(NoteBlock(Content(f"Error: {error}"), classes="-error"))
        elif stop == "aborted":
            out.append(NoteBlock(Content("Aborted.")))
        return out

    def _tool_result_blocks(self, message: dict[str, Any]) -> list[Widget]:
        call = self._calls.get(str(message.get("toolCallId")))
        name = str(message.get("toolName") or "tool")
        title = tool_call_text(name, call.get("arguments") if call else {})
        text = _text_blocks(message.get("content"))
        lines = text.splitlines()
        args = json.dumps(call.get("arguments") if call else {}, ensure_ascii=False, indent=2)
        body = Static(Content(strip_escapes(args)), markup=False, classes="tool-args")
        result = tool_result_widget(text)
        collapsed = len(lines) > PREVIEW_LINES
        block = ToolBlock(body, result, title=strip_escapes(title), collapsed=collapsed)
        if message.get("isError"):
            block.add_class("-error")
        return [block]

    # ------------------------------------------------------------------ live updates

    def _on_session_event(self, message: object) -> None:
        if isinstance(message, LeafMoved | SessionSwitched):
            running = self.pitui.agent is not None and self.pitui.agent.running
            if isinstance(message, SessionSwitched) or not running:
                self.rebuild()
        elif isinstance(message, EntryAppended):
            self._events.put_nowait(message)
        elif isinstance(message, AgentUpdate):
            self._events.put_nowait(message.event)

    def _append_entry(self, entry_id: str) -> None:
        node = self.pitui.store.node(entry_id)
        if not self._shows(node):
            return
        if node.type == "message" and node.role == "assistant":
            self._end_stream()
        widgets = self.blocks_for(node)
        if widgets:
            self.mount_all(widgets)

    async def _on_agent_event(self, event: object) -> None:
        if isinstance(event, MessageStart) and event.role == "assistant":
            self._streaming = None
        elif isinstance(event, MessageDelta) and event.kind == "text":
            if self._streaming is None:
                self._streaming = AssistantBlock("", classes="streaming")
                await self.mount(self._streaming)
                self._stream = Markdown.get_stream(self._streaming)
            if self._stream is not None:
                await self._stream.write(strip_escapes(event.text))
        elif isinstance(event, MessageEnd | ToolEnd | RunEnded):
            await self._stop_stream()

    async def _stop_stream(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None

    def _end_stream(self) -> None:
        """The stored message replaces the streamed preview."""
        if self._streaming is not None:
            self._streaming.remove()
            self._streaming = None
        self._stream = None
