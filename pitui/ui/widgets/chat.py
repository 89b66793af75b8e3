"""The chat pane: the active branch as blocks, with the reply being streamed at the bottom.

Blocks are built from store entries (the store is the truth). The reply in progress is fed to
a ``MarkdownStream`` chunk by chunk (``Markdown.get_stream``: fragments are appended, never
re-rendered); when the stored assistant message arrives, the preview is replaced by the stored
block exactly once. Every store and agent event goes through one queue and one consumer, so
deltas, stored entries and leaf moves are applied in the order they happened.

Only a window of the newest blocks is mounted ("Show N earlier entries" loads older ones, and
blocks scrolled far out of a long live session are pruned again).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Markdown, Static

from pitui.agent.events import (
    MessageDelta,
    MessageStart,
    RunEnded,
    ToolStart,
)
from pitui.deepjson import clip
from pitui.deepjson import dumps as json_dumps
from pitui.session.node import Node
from pitui.session.oneline import tool_call_text
from pitui.session.shapes import content_images, content_text, is_conversation, tool_calls
from pitui.text import StreamSanitizer, strip_escapes
from pitui.ui.app_state import UsesApp
from pitui.ui.messages import AgentUpdate, EntryAppended, LeafMoved, SessionSwitched
from pitui.ui.sanitize import tool_output_text

if TYPE_CHECKING:
    from textual.widgets._markdown import MarkdownStream


WINDOW = 150  # entries mounted after a rebuild
PRUNE_SLACK = 50  # live entries allowed past the window before the oldest are unmounted
ARG_PREVIEW_LINES = 3
OUTPUT_PREVIEW_LINES = 5
PREVIEW_LINE_CHARS = 400
SHELL_TOOLS = frozenset({"bash"})


def _text_blocks(content: Any) -> str:
    """The text of a content value, with a note for its images."""
    text = content_text(content, "\n")
    images = content_images(content)
    if images:
        note = f"[{images} image{'s' if images > 1 else ''}]"
        text = f"{text}\n{note}" if text else note
    return text


# ---------------------------------------------------------------------------------- blocks


class UserBlock(Static):
    """A user message (literal text: no markup, no escapes)."""

    DEFAULT_CSS: ClassVar[str] = """
    UserBlock {
        margin: 1 0 0 0; padding: 0 1;
        border-left: thick $primary; background: $boost;
    }
    """


class AssistantBlock(Markdown):
    """An assistant message's text (Markdown). The streamed preview has ``-streaming``."""

    DEFAULT_CSS: ClassVar[str] = """
    AssistantBlock { margin: 1 0 0 0; padding: 0 1; }
    AssistantBlock > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self, markdown: str = "", **kwargs: Any) -> None:
        super().__init__(markdown, **kwargs)
        self._stream: MarkdownStream | None = None

    def start_stream(self) -> MarkdownStream:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        return self._stream

    async def stop_stream(self) -> None:
        """Flush and stop the stream (its task must never be left pending)."""
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(Exception):
                await stream.stop()

    async def on_unmount(self) -> None:
        await self.stop_stream()


class NoteBlock(Static):
    """A one-line note: errors, aborted replies, custom messages."""

    DEFAULT_CSS: ClassVar[str] = """
    NoteBlock { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    NoteBlock.-error { color: $error; border-left: thick $error; }
    NoteBlock.-aborted { color: $warning; }
    """


class ThinkingBlock(Collapsible):
    """Thinking, collapsed; while streaming its text is only rendered when expanded."""

    DEFAULT_CSS: ClassVar[str] = """
    ThinkingBlock {
        margin: 1 0 0 0; padding: 0; border: none; background: transparent;
    }
    ThinkingBlock > CollapsibleTitle { color: $text-muted; text-style: italic; padding: 0 1; }
    ThinkingBlock > Contents { padding: 0 1 0 3; }
    ThinkingBlock .thinking-text { color: $text-muted; }
    """

    def __init__(self, text: str = "", *, live: bool = False, **kwargs: Any) -> None:
        self._parts: list[str] = [text] if text else []
        self._body = Static(Content(text), classes="thinking-text")
        super().__init__(self._body, title="Thinking…" if live else "Thinking", **kwargs)
        _keep_focus_on_click(self)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, text: str) -> None:
        self._parts.append(text)
        if not self.collapsed:
            self._body.update(Content(self.text))

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self:
            self._body.update(Content(self.text))


def _keep_focus_on_click(collapsible: Collapsible) -> None:
    """Clicking a title toggles it without taking the focus from the prompt editor."""
    title_widget = getattr(collapsible, "_title", None)
    if title_widget is not None:
        title_widget.FOCUS_ON_CLICK = False


class SummaryBlock(Collapsible):
    """A compaction or branch summary: one line, expands to the summary."""

    def __init__(self, *children: Widget, **kwargs: Any) -> None:
        super().__init__(*children, **kwargs)
        _keep_focus_on_click(self)

    DEFAULT_CSS: ClassVar[str] = """
    SummaryBlock {
        margin: 1 0 0 0; padding: 0; border: none;
        border-top: hkey $secondary 60%; border-bottom: hkey $secondary 60%;
        background: transparent;
    }
    SummaryBlock > CollapsibleTitle { color: $text-secondary; padding: 0 1; }
    SummaryBlock > Contents { padding: 0 1 0 3; }
    """


class ToolBlock(Widget, can_focus=True):
    """A tool call: header, arguments and result. Long ones show a preview until expanded
    (click, or Enter when focused)."""

    DEFAULT_CSS: ClassVar[str] = """
    ToolBlock {
        height: auto; margin: 1 0 0 0; padding: 0 1;
        border-left: thick $secondary 50%;
    }
    ToolBlock:focus { border-left: thick $accent; background: $boost; }
    ToolBlock.-error { border-left: thick $error; }
    ToolBlock.-running { border-left: thick $warning 50%; }
    ToolBlock > .tool-header { text-style: bold; }
    ToolBlock.-error > .tool-header { color: $text-error; }
    ToolBlock.-error > .tool-output { color: $text-error; }
    ToolBlock > .tool-args { color: $text-muted; }
    ToolBlock > .tool-more { color: $text-muted; text-style: italic; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_expanded", "Expand/collapse", show=False),
    ]
    FOCUS_ON_CLICK: ClassVar[bool] = False  # clicking toggles; typing stays in the editor

    expanded: reactive[bool] = reactive(False, init=False)

    def __init__(
        self,
        name: str,
        arguments: Any,
        output: str | None = None,
        *,
        is_error: bool = False,
        shell: bool = False,
        title: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tool_name = name
        self.arguments = arguments
        self.is_error = is_error
        self.shell = shell
        self.tool_title = strip_escapes(title or tool_call_text(name, arguments))
        self._args = _argument_lines(name, arguments, self.tool_title)
        self._output: list[Text] = []
        self._header = Static(classes="tool-header")
        self._args_view = Static(classes="tool-args")
        self._output_view = Static(classes="tool-output")
        self._more = Static(classes="tool-more")
        self.set_output(output)
        self.set_class(is_error, "-error")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._args_view
        yield self._output_view
        yield self._more

    def on_mount(self) -> None:
        self._render_parts()

    def set_output(self, output: str | None) -> None:
        """The result text (``None`` while the tool runs)."""
        self.running = output is None
        self.set_class(self.running, "-running")
        if output is None:
            self._output = []
        else:
            text = tool_output_text(output) if self.shell else Text(strip_escapes(output))
            text.expand_tabs(4)
            self._output = list(text.split("\n", allow_blank=True)) if output else []
            while self._output and not self._output[-1].plain.strip():
                self._output.pop()
        self._long_lines = any(len(line) > PREVIEW_LINE_CHARS for line in self._output) or any(
            len(line) > PREVIEW_LINE_CHARS for line in self._args
        )
        if self.is_mounted:
            self._render_parts()

    @property
    def hidden_lines(self) -> int:
        """Lines the collapsed preview leaves out (0: nothing to expand)."""
        hidden = max(0, len(self._args) - ARG_PREVIEW_LINES)
        hidden += max(0, len(self._output) - OUTPUT_PREVIEW_LINES)
        return hidden

    @property
    def collapsible(self) -> bool:
        return self.hidden_lines > 0 or self._long_lines

    def _render_parts(self) -> None:
        show_all = self.expanded or not self.collapsible
        mark = "…" if self.running else "✗" if self.is_error else "✓"
        self._header.update(Content(f"{mark} {self.tool_title}"))
        args = self._args
        output = self._output
        if not show_all:
            args = [_clip_str(line) for line in args[:ARG_PREVIEW_LINES]]
            if len(output) > OUTPUT_PREVIEW_LINES:
                # Shell output: the end matters most (errors, summaries); other tools: the start.
                output = (
                    output[-OUTPUT_PREVIEW_LINES:] if self.shell else output[:OUTPUT_PREVIEW_LINES]
                )
            output = [_clip(line) for line in output]
        self._args_view.update(Content("\n".join(args)))
        self._args_view.display = bool(args)
        self._output_view.update(
            Content.from_rich_text(Text("\n").join(output)) if output else Content("")
        )
        self._output_view.display = bool(output)
        if self.collapsible:
            if self.expanded:
                more = "▲ collapse (click or Enter)"
            elif self.hidden_lines:
                more = f"▼ {self.hidden_lines} more lines (click or Enter to expand)"
            else:
                more = "▼ long lines cut (click or Enter to expand)"
            self._more.update(Content(more))
        self._more.display = self.collapsible

    def watch_expanded(self, expanded: bool) -> None:
        self._render_parts()

    def action_toggle_expanded(self) -> None:
        if self.collapsible:
            self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle_expanded()


def _clip_str(line: str) -> str:
    return line if len(line) <= PREVIEW_LINE_CHARS else line[:PREVIEW_LINE_CHARS] + "…"


def _clip(line: Text) -> Text:
    """A preview line cut to a sane length (minified JSON, long logs)."""
    if len(line) <= PREVIEW_LINE_CHARS:
        return line
    clipped = line[:PREVIEW_LINE_CHARS]
    clipped.append("…")
    return clipped


DISPLAY_DEPTH = 32
"""Tool arguments nested deeper than this show ``…`` (JSON can come ~1,000 levels deep)."""


def _argument_lines(name: str, arguments: Any, title: str = "") -> list[str]:
    """The call's arguments as text lines (``$ command`` for bash, ``key: value`` otherwise);
    a one-line value the title already shows in full is left out."""
    if not isinstance(arguments, dict):
        shown = clip(arguments, DISPLAY_DEPTH)
        return [strip_escapes(json_dumps(shown, ensure_ascii=False))] if arguments else []
    lines: list[str] = []
    if name == "bash" and isinstance(arguments.get("command"), str):
        command = strip_escapes(arguments["command"]).split("\n")
        if len(command) > 1 or command[0] not in title:
            lines.append(f"$ {command[0]}")
            lines.extend(f"  {line}" for line in command[1:])
        rest = {k: v for k, v in arguments.items() if k != "command"}
    else:
        rest = arguments
    for key, value in rest.items():
        if isinstance(value, str):
            text = value
        else:
            shown = clip(value, DISPLAY_DEPTH)  # hostile nesting: bounded, never a crash
            text = json_dumps(shown, ensure_ascii=False)
            if len(text) > 80:
                text = json_dumps(shown, ensure_ascii=False, indent=2)
        value_lines = strip_escapes(text).split("\n")
        if len(value_lines) == 1:
            if not (isinstance(value, str) and value and value in title):
                lines.append(f"{key}: {value_lines[0]}")
        else:
            lines.append(f"{key}:")
            lines.extend(f"  {line}" for line in value_lines)
    return lines


# ---------------------------------------------------------------------------------- the pane


class ChatView(UsesApp, VerticalScroll):
    """Renders ``app.store``'s active branch; streams the reply in progress."""

    DEFAULT_CSS: ClassVar[str] = """
    ChatView { height: 1fr; padding: 0 1 1 1; layout: stream; }
    ChatView > #load-earlier { width: 100%; margin: 1 0 0 0; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._events: asyncio.Queue[object] = asyncio.Queue()
        # What is shown: the leaf it reflects, the ids on its path, mounted entries in order.
        self._leaf_id: str | None = None
        self._path_ids: set[str] = set()
        self._mounted: list[tuple[str, list[Widget]]] = []
        self._hidden_before = 0  # visible entries before the window (not mounted)
        self._load_earlier: Button | None = None
        self._calls: dict[str, dict[str, Any]] = {}
        # The reply in progress.
        self._reply: AssistantBlock | None = None
        self._thinking: ThinkingBlock | None = None
        self._sanitizer = StreamSanitizer()
        self._running_tools: dict[str, ToolBlock] = {}

    def compose(self) -> ComposeResult:
        yield from self._build()

    def on_mount(self) -> None:
        self.anchor()
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)
        self.run_worker(self._consume(), group="chat-stream", exclusive=True)

    async def on_unmount(self) -> None:
        await self._stop_reply()

    # ------------------------------------------------------------------ the queue

    def _on_session_event(self, message: object) -> None:
        if isinstance(message, AgentUpdate):
            self._events.put_nowait(message.event)
        elif isinstance(message, EntryAppended | LeafMoved | SessionSwitched):
            self._events.put_nowait(message)

    async def _consume(self) -> None:
        """One consumer keeps events in order (deltas, then the stored message, ...)."""
        try:
            while True:
                item = await self._events.get()
                try:
                    await self._handle(item)
                except Exception as exc:  # never leave the pane dead: show the store again
                    self.log.error(f"chat: {item!r} failed: {exc!r}")
                    await self.rebuild()
                finally:
                    self._events.task_done()
        finally:
            await self._stop_reply()

    async def _handle(self, item: object) -> None:
        """Apply one event. Events may be stale: a rebuild reads the store as it is now, ahead
        of the events still queued, so an event only matters if the view differs from it."""
        store = self.pitui.store
        if isinstance(item, SessionSwitched):
            await self.rebuild()
        elif isinstance(item, EntryAppended):
            if item.entry_id in self._path_ids:
                return  # already shown
            if item.parent_id == self._leaf_id and item.entry_id in store:
                await self._append_entry(item.entry_id)
            elif store.leaf_id != self._leaf_id:
                await self.rebuild()
        elif isinstance(item, LeafMoved):
            if item.new_leaf_id != self._leaf_id and store.leaf_id != self._leaf_id:
                await self.rebuild()
        else:
            await self._on_agent_event(item)

    async def wait_idle(self) -> None:
        """Wait until every queued event has been applied (tests)."""
        await self._events.join()

    # ------------------------------------------------------------------ building

    def visible_entries(self, path: list[Node] | None = None) -> list[Node]:
        nodes = path if path is not None else self.pitui.store.path_to()
        return [n for n in nodes if self._shows(n)]

    @staticmethod
    def _shows(node: Node) -> bool:
        return is_conversation(node.type, node.role)

    def _build(self) -> list[Widget]:
        """Reset the shown state to the store's active branch; the widgets to mount."""
        store = self.pitui.store
        path = store.path_to()
        self._leaf_id = store.leaf_id
        self._path_ids = {n.id for n in path}
        self._calls.clear()
        self._running_tools.clear()
        self._reply = self._thinking = None
        self._sanitizer = StreamSanitizer()
        entries = self.visible_entries(path)
        self._hidden_before = max(0, len(entries) - WINDOW)
        self._mounted = []
        widgets: list[Widget] = []
        self._load_earlier = None
        if self._hidden_before:
            self._load_earlier = self._earlier_button()
            widgets.append(self._load_earlier)
        for node in entries[self._hidden_before :]:
            blocks = self.blocks_for(node)
            self._mounted.append((node.id, blocks))
            widgets.extend(blocks)
        return widgets

    async def rebuild(self) -> None:
        """Re-render the active branch (the newest window of entries)."""
        await self._stop_reply()
        widgets = self._build()
        with self.app.batch_update():
            await self.remove_children()
            if widgets:
                await self.mount_all(widgets)
        self.scroll_end(animate=False)

    def _earlier_button(self) -> Button:
        return Button(
            f"Show {self._hidden_before} earlier entries", id="load-earlier", compact=True
        )

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "load-earlier":
            return
        event.stop()
        entries = self.visible_entries()
        start = max(0, self._hidden_before - WINDOW)
        older: list[tuple[str, list[Widget]]] = []
        for node in entries[start : self._hidden_before]:
            older.append((node.id, self.blocks_for(node)))
        first_shown = next((w[0] for _, w in self._mounted if w), None)
        self._hidden_before = start
        self._mounted[:0] = older
        widgets = [w for _, blocks in older for w in blocks]
        if widgets:
            await self.mount_all(widgets, after=event.button)
        if start == 0:
            await event.button.remove()
            self._load_earlier = None
        else:
            event.button.label = f"Show {start} earlier entries"
        if first_shown is not None:
            self.call_after_refresh(self.scroll_to_widget, first_shown, top=True, animate=False)

    async def _append_entry(self, entry_id: str) -> None:
        store = self.pitui.store
        node = store.node(entry_id)
        self._leaf_id = entry_id
        self._path_ids.add(entry_id)
        if not self._shows(node):
            return
        blocks = self.blocks_for(node)
        before: Widget | None = None
        replaced: list[Widget] = []
        if node.type == "message" and node.role == "assistant":
            # The stored message replaces the streamed preview (exactly once).
            await self._stop_reply()
            if self._thinking is not None and not self._thinking.collapsed:
                for block in blocks:
                    if isinstance(block, ThinkingBlock):
                        block.collapsed = False  # the reader had it open
            replaced = [w for w in (self._thinking, self._reply) if w is not None]
            self._reply = self._thinking = None
            self._sanitizer = StreamSanitizer()
        elif node.type == "message" and node.role == "toolResult":
            message = store.data(node).get("message") or {}
            running = self._running_tools.pop(str(message.get("toolCallId")), None)
            if running is not None:
                replaced = [running]
        if replaced:
            before = replaced[0]
        self._mounted.append((entry_id, blocks))
        with self.app.batch_update():
            if blocks:
                if before is not None and before.parent is self:
                    await self.mount_all(blocks, before=before)
                else:
                    await self.mount_all(blocks)
            for widget in replaced:
                await widget.remove()
        await self._prune()

    async def _prune(self) -> None:
        """Unmount the oldest entries of a long live session (only while at the bottom)."""
        excess = len(self._mounted) - WINDOW
        if excess <= PRUNE_SLACK or self.scroll_y < self.max_scroll_y - 1:
            return
        dropped, self._mounted = self._mounted[:excess], self._mounted[excess:]
        self._hidden_before += excess
        widgets = [w for _, blocks in dropped for w in blocks]
        with self.app.batch_update():
            if widgets:
                await self.remove_children(widgets)
            if self._load_earlier is None:
                self._load_earlier = self._earlier_button()
                await self.mount(self._load_earlier, before=0)
            else:
                self._load_earlier.label = f"Show {self._hidden_before} earlier entries"

    # ------------------------------------------------------------------ entry → blocks

    def blocks_for(self, node: Node) -> list[Widget]:
        """The widgets for one entry."""
        store = self.pitui.store
        entry = store.data(node)
        if node.type == "compaction":
            tokens = entry.get("tokensBefore")
            title = f"Compacted from {tokens:,} tokens" if isinstance(tokens, int) else "Compacted"
            summary = Markdown(strip_escapes(str(entry.get("summary") or "")))
            return [SummaryBlock(summary, title=title, collapsed=True, classes="compaction")]
        if node.type == "branch_summary":
            summary = Markdown(strip_escapes(str(entry.get("summary") or "")))
            return [
                SummaryBlock(
                    summary, title="Branch summary", collapsed=True, classes="branch-summary"
                )
            ]
        if node.type == "custom_message":
            if entry.get("display") is False:
                return []
            text = strip_escapes(_text_blocks(entry.get("content")))
            kind = strip_escapes(str(entry.get("customType") or "custom"))
            return [NoteBlock(Content(f"[{kind}] {text}"), classes="custom")]
        message = entry.get("message") or {}
        role = message.get("role")
        if role == "user":
            return [UserBlock(Content(strip_escapes(_text_blocks(message.get("content")))))]
        if role == "assistant":
            return self._assistant_blocks(message)
        if role == "toolResult":
            return [self._tool_result_block(node, message)]
        if role == "bashExecution":
            output = str(message.get("output") or "")
            exit_code = message.get("exitCode")
            if message.get("cancelled"):
                output += "\n(command cancelled)"
            elif isinstance(exit_code, int) and exit_code != 0:
                output += f"\nexit code: {exit_code}"
            command = str(message.get("command", ""))
            return [
                ToolBlock(
                    "bash",
                    {"command": command},
                    output,
                    is_error=bool(message.get("cancelled"))
                    or (isinstance(exit_code, int) and exit_code != 0),
                    shell=True,
                    title=f"$ {' '.join(command.split())[:80]}",
                )
            ]
        if role == "custom":
            return [NoteBlock(Content(strip_escapes(_text_blocks(message.get("content")))))]
        return []

    def _assistant_blocks(self, message: dict[str, Any]) -> list[Widget]:
        out: list[Widget] = []
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "thinking" and block.get("thinking"):
                out.append(ThinkingBlock(strip_escapes(str(block["thinking"])), collapsed=True))
            elif kind == "text" and str(block.get("text") or "").strip():
                out.append(AssistantBlock(strip_escapes(str(block["text"]))))
            elif kind == "toolCall":
                self._calls[str(block.get("id"))] = block
        stop = message.get("stopReason")
        if stop == "error":
            error = strip_escapes(str(message.get("errorMessage") or "unknown error"))
            out.append(NoteBlock(Content(f"Error: {error}"), classes="-error"))
        elif stop == "aborted":
            out.append(NoteBlock(Content("Aborted."), classes="-aborted"))
        return out

    def _find_call(self, node: Node, call_id: str) -> dict[str, Any] | None:
        """The tool call a result answers: remembered, else in the nearest assistant above."""
        call = self._calls.get(call_id)
        if call is not None:
            return call
        store = self.pitui.store
        parent = node.parent
        while parent is not None:
            if parent.type == "message" and parent.role == "assistant":
                for block in tool_calls(store.data(parent).get("message")):
                    self._calls.setdefault(str(block.get("id")), block)
                return self._calls.get(call_id)
            parent = parent.parent
        return None

    def _tool_result_block(self, node: Node, message: dict[str, Any]) -> ToolBlock:
        call_id = str(message.get("toolCallId"))
        call = self._find_call(node, call_id)
        name = str(message.get("toolName") or (call or {}).get("name") or "tool")
        arguments = (call or {}).get("arguments") or {}
        return ToolBlock(
            name,
            arguments,
            _text_blocks(message.get("content")),
            is_error=bool(message.get("isError")),
            shell=name in SHELL_TOOLS,
        )

    # ------------------------------------------------------------------ live updates

    async def _on_agent_event(self, event: object) -> None:
        if isinstance(event, MessageStart) and event.role == "assistant":
            # A preview never replaced by its stored message would be stale: drop it.
            await self._stop_reply()
            for stale in (self._thinking, self._reply):
                if stale is not None:
                    await stale.remove()
            self._reply = self._thinking = None
            self._sanitizer = StreamSanitizer()
        elif isinstance(event, MessageDelta) and event.kind == "text":
            text = self._sanitizer.feed(event.text)
            if not text:
                return
            if self._reply is None:
                self._reply = AssistantBlock("", classes="-streaming")
                await self.mount(self._reply)
            await self._reply.start_stream().write(text)
        elif isinstance(event, MessageDelta) and event.kind == "thinking":
            text = strip_escapes(event.text)
            if self._thinking is None:
                self._thinking = ThinkingBlock(live=True, collapsed=True, classes="-streaming")
                if self._reply is not None:
                    await self.mount(self._thinking, before=self._reply)
                else:
                    await self.mount(self._thinking)
            self._thinking.append(text)
        elif isinstance(event, ToolStart):
            block = ToolBlock(event.name, event.arguments, None, shell=event.name in SHELL_TOOLS)
            self._running_tools[event.call_id] = block
            await self.mount(block)
        elif isinstance(event, RunEnded):
            await self._stop_reply()
            leftovers = list(self._running_tools.values())
            self._running_tools.clear()
            for running in leftovers:
                await running.remove()

    async def _stop_reply(self) -> None:
        """Stop the preview's stream (the preview itself stays until the stored block)."""
        if self._reply is not None:
            await self._reply.stop_stream()

    # ------------------------------------------------------------------ inspection

    def assistant_blocks(self) -> list[AssistantBlock]:
        """Stored assistant text blocks (not the streamed preview)."""
        return [b for b in self.query(AssistantBlock) if not b.has_class("-streaming")]
