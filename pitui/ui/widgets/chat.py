"""The chat pane: the active branch as blocks, with the reply being streamed at the bottom.

Blocks are built from store entries (the store is the truth). The reply in progress is shown
at most once a frame: text received meanwhile is appended to its Markdown view, which renders
only its last block again, so the cost per frame does not grow with the reply (see
:class:`AssistantBlock` and :mod:`pitui.ui.widgets.markdown_view`). When the stored
assistant message arrives with the streamed text, the preview becomes its block as it is
(nothing is rendered again). Every store and agent event goes through one queue and one
consumer, so deltas, stored entries and leaf moves are applied in the order they happened.
What is done per event is O(change): no walk of the path.

Only a window of the newest blocks is mounted, the newest screenful before the first frame and
the rest just after it. "Show N earlier entries" mounts the previous window and unmounts the
newest beyond ``MAX_MOUNTED`` (scrolling back costs the same at every click and memory stays
bounded); blocks scrolled far out of a long live session are pruned again.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import time
from functools import partial
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive, var
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Static

from pitui import collector
from pitui.agent.events import (
    MessageDelta,
    MessageStart,
    RunEnded,
    ToolOutput,
    ToolStart,
    UserCommandEnd,
    UserCommandStart,
)
from pitui.agent.mentions import attachment_line
from pitui.deepjson import clip
from pitui.deepjson import dumps as json_dumps
from pitui.session.node import Node, depth_of
from pitui.session.oneline import tool_call_text
from pitui.session.shapes import (
    attached_files,
    content_images,
    content_text,
    is_conversation,
    tool_calls,
    typed_content,
)
from pitui.text import StreamSanitizer, strip_escapes
from pitui.ui.app_state import UsesApp
from pitui.ui.file_changes import edit_diff, write_preview
from pitui.ui.live_output import LIVE_LINES, LiveTail
from pitui.ui.messages import (
    AgentUpdate,
    EntryAppended,
    LeafMoved,
    OthersAppended,
    SessionSwitched,
)
from pitui.ui.sanitize import tool_output_text
from pitui.ui.textual_patches.kept_lines import KeptLines, KeptVerticalScrollBar
from pitui.ui.textual_patches.widgets import AnchoredFromTheFirstLayout, title_click_keeps_focus
from pitui.ui.widgets.bounded import (
    MARKDOWN_CHARS,
    TEXT_BLOCKS,
    BoundedText,
    MoreLine,
    cut_at,
)
from pitui.ui.widgets.markdown_view import MarkdownView
from pitui.ui.widgets.notice import Notice, NoticeBlock, Severity

log = logging.getLogger("pitui.ui.chat")

WINDOW = 150  # entries mounted after a rebuild
PRUNE_SLACK = 50  # live entries allowed past the window before the oldest are unmounted
FIRST_SCREEN = 12  # the newest entries, mounted before the first frame (the rest just after)
FILL_SLICE = 12  # entries of the rest mounted per frame after it (keys are handled between)
FILL_PAUSE = 0.25  # s between looks while another screen covers the chat (nothing is mounted)
MAX_MOUNTED = 2 * WINDOW  # scrolling back keeps at most this many entries mounted
SYNC_COUNT_DEPTH = 50_000  # paths up to this long are counted at once (else in a thread)
# Streamed text reaches the screen at most this often (seconds). Each update scrolls the chat,
# so Textual composes every row of it again: at 20 a second rather than 30, a streaming reply
# took ~15% less CPU in the benchmark and keys echoed as fast.
FRAME = 1 / 20
STREAM_STEPS = 4  # a streamed reply grows by this fraction of the chat's height at a time
_FLUSH = object()  # queue marker: show the pending streamed text
_FILL = object()  # queue marker: mount the next slice of a fresh window
_FILL_ALL = object()  # queue marker: mount all the rest of it now
LOAD_DELAY = 0.2  # seconds after the first frame before big entries are parsed
BIG_ENTRY = 1_000_000
"""Entries whose line is longer (bytes) are parsed in a thread after the first frame; a note
("Loading a 16.6 MB entry…") holds their place until then."""
ARG_PREVIEW_LINES = 3
BODY_PREVIEW_LINES = 12  # an edit's diff, a write's first lines
OUTPUT_PREVIEW_LINES = 5
MORE_LINE_STYLE = "dim italic"
PREVIEW_LINE_CHARS = 400
SHELL_TOOLS = frozenset({"bash"})


class _Loaded:
    """Queue item: a big entry parsed in a thread (``entry`` None: it could not be read)."""

    def __init__(
        self,
        entry_id: str,
        entry: dict[str, Any] | None,
        generation: int,
        threaded: bool = False,
    ) -> None:
        self.entry_id = entry_id
        self.entry = entry
        self.generation = generation
        self.threaded = threaded  # parsed in a thread (one parse less under way)


def _count_visible(start: Node | None) -> int:
    """Visible chat entries from ``start`` up to the root (a walk up the path)."""
    count = 0
    cur = start
    while cur is not None:
        if not cur.hidden and is_conversation(cur.type, cur.role):
            count += 1
        cur = cur.parent
    return count


def _text_blocks(content: Any) -> str:
    """The text of a content value, with a note for its images."""
    text = content_text(content, "\n")
    images = content_images(content)
    if images:
        note = f"[{images} image{'s' if images > 1 else ''}]"
        text = f"{text}\n{note}" if text else note
    return text


# ---------------------------------------------------------------------------------- blocks


class UserBlock(BoundedText):
    """A user message (literal text: no markup, no escapes); a long one shows its start and
    "show more" (see :mod:`pitui.ui.widgets.bounded`)."""

    DEFAULT_CSS: ClassVar[str] = """
    UserBlock {
        margin: 1 0 0 0; padding: 0 1;
        border-left: thick $primary; background: $boost;
    }
    """


class AssistantBlock(KeptLines, Widget):
    """An assistant message's text (Markdown). The streamed preview has ``-streaming``.

    The text is one :class:`MarkdownView` (its blocks rendered to lines); streamed text is
    appended to it, which renders only its last block again, so the cost of an append does not
    grow with the reply. When the stored message arrives with the same text, the preview simply
    becomes its block (nothing is rendered again).
    """

    DEFAULT_CSS: ClassVar[str] = """
    AssistantBlock { height: auto; layout: stream; margin: 1 0 0 0; padding: 0 1; }
    """

    def __init__(
        self,
        markdown: str = "",
        *,
        rest: str = "",
        later: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._view = MarkdownView(markdown)
        # A long message: the text not shown yet ("show more" reveals it a part at a time).
        self._rest = rest
        # Later text blocks of the message, unsanitized until the reader asks for them (joined
        # to ``rest`` then, with where each starts in it).
        self._later = later or []
        self._block_starts: list[int] = []
        self._revealed = 0  # characters of ``rest`` shown since
        self._more = (
            MoreLine(self.hidden_chars, len(self._later), classes="more")
            if rest or self._later
            else None
        )

    def compose(self) -> ComposeResult:
        yield self._view
        if self._more is not None:
            yield self._more

    @property
    def hidden_chars(self) -> int:
        """Characters of the message not shown (behind "show more")."""
        return len(self._rest) + sum(2 + len(text) for text in self._later)

    def _hidden_blocks(self) -> int:
        return len(self._block_starts) - bisect.bisect_left(self._block_starts, self._revealed)

    def _join_later(self) -> None:
        """The later blocks, sanitized, at the end of the hidden text (on the first "show
        more", before anything of it was revealed)."""
        parts = [self._rest]
        position = len(self._rest)
        separate = bool(self._rest or self._view.source)  # a blank line between
        for raw in self._later:
            if separate:
                parts.append("\n\n")
                position += 2
            text = strip_escapes(raw)
            self._block_starts.append(position)
            parts.append(text)
            position += len(text)
            separate = True
        self._rest = "".join(parts)
        self._later = []

    async def show_more(self) -> None:
        """Reveal the next part of the hidden text (appended like streamed text)."""
        if self._later:
            self._join_later()
        end = cut_at(self._rest, 0, MARKDOWN_CHARS)
        chunk, self._rest = self._rest[:end], self._rest[end:]
        self._revealed += end
        await self.append(chunk)
        if self._more is not None:
            if self._rest:
                self._more.set_hidden(len(self._rest), self._hidden_blocks())
            else:
                await self._more.remove()
                self._more = None

    async def on_more_line_pressed(self, event: MoreLine.Pressed) -> None:
        event.stop()
        await self.show_more()

    @property
    def source(self) -> str:
        return self._view.source

    @property
    def whole_text(self) -> str | None:
        """The text shown and behind "show more", or None while later blocks are unread."""
        return None if self._later else self._view.source + self._rest

    @property
    def view(self) -> MarkdownView:
        return self._view

    async def append(self, text: str) -> None:
        """Append streamed text (already sanitized); cost bounded by its last block's size."""
        self._view.append(text)


class NoteBlock(BoundedText):
    """A one-line note: errors, aborted replies, custom messages (a long one is cut)."""

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
        self._body = BoundedText(text, classes="thinking-text")
        super().__init__(self._body, title="Thinking…" if live else "Thinking", **kwargs)
        _keep_focus_on_click(self)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, text: str) -> None:
        self._parts.append(text)
        if not self.collapsed:
            self._body.set_text(self.text)

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible is self:
            self._body.set_text(self.text)


def _keep_focus_on_click(collapsible: Collapsible) -> None:
    """Clicking a title toggles it without taking the focus from the prompt editor."""
    title_click_keeps_focus(collapsible)


class SummaryBlock(Collapsible):
    """A compaction or branch summary: one line, expands to the summary (a long one shows its
    start and "show more")."""

    def __init__(self, summary: str, **kwargs: Any) -> None:
        # Rendered as replies are (a MarkdownView: lines only once expanded and painted).
        self._summary = summary
        self._end = cut_at(summary, 0, MARKDOWN_CHARS)
        self._markdown = MarkdownView(summary[: self._end])
        hidden = len(summary) - self._end
        self._more = MoreLine(hidden, classes="more") if hidden else None
        children = [self._markdown] + ([self._more] if self._more is not None else [])
        super().__init__(*children, **kwargs)
        _keep_focus_on_click(self)

    async def on_more_line_pressed(self, event: MoreLine.Pressed) -> None:
        event.stop()
        if self._more is None:
            return
        start, self._end = self._end, cut_at(self._summary, self._end, MARKDOWN_CHARS)
        self._markdown.append(self._summary[start : self._end])
        hidden = len(self._summary) - self._end
        if hidden:
            self._more.set_hidden(hidden)
        else:
            await self._more.remove()
            self._more = None

    DEFAULT_CSS: ClassVar[str] = """
    SummaryBlock {
        margin: 1 0 0 0; padding: 0; border: none;
        border-top: hkey $secondary 60%; border-bottom: hkey $secondary 60%;
        background: transparent;
    }
    SummaryBlock > CollapsibleTitle { color: $text-secondary; padding: 0 1; }
    SummaryBlock > Contents { padding: 0 1 0 3; }
    SummaryBlock MarkdownView { margin-top: 1; }
    """


class ToolBlock(Widget, can_focus=True):
    """A tool call: header, arguments, a body (an edit's diff, a write's file preview) and the
    result. Long ones show a preview until expanded (click, Enter when focused, or Ctrl+O for
    every block). A running bash command shows the tail of its output as it arrives."""

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
        details: Any = None,
        expanded: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tool_name = name
        self.arguments = arguments
        self.is_error = is_error
        self.shell = shell
        self.tool_title = strip_escapes(title or tool_call_text(name, arguments))
        self._body: list[Text] = []
        if name == "edit" and _edits_text(arguments):
            self._body = edit_diff(arguments, details)
            self._args = _argument_lines(name, _without(arguments, _EDIT_KEYS), self.tool_title)
        elif name == "write" and isinstance(_get(arguments, "content"), str):
            self._body, summary = write_preview(arguments)
            rest = _argument_lines(name, _without(arguments, {"content"}), self.tool_title)
            self._args = [summary, *rest]
        else:
            self._args = _argument_lines(name, arguments, self.tool_title)
        self._output: list[Text] = []
        self._live: LiveTail | None = None
        self._live_timer: Timer | None = None
        self._live_cost = 0.0  # seconds the last live update took to prepare
        self._header = Static(classes="tool-header")
        self._args_view = Static(classes="tool-args")
        self._body_view = Static(classes="tool-body")
        self._output_view = Static(classes="tool-output")
        self._more = Static(classes="tool-more")
        self.set_reactive(ToolBlock.expanded, expanded)
        self.set_output(output)
        self.set_class(is_error, "-error")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._args_view
        yield self._body_view
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
            self._live = None
            text = tool_output_text(output) if self.shell else Text(strip_escapes(output))
            text.expand_tabs(4)
            self._output = list(text.split("\n", allow_blank=True)) if output else []
            while self._output and not self._output[-1].plain.strip():
                self._output.pop()
        self._long_lines = any(
            len(line) > PREVIEW_LINE_CHARS for line in (*self._output, *self._body)
        ) or any(len(line) > PREVIEW_LINE_CHARS for line in self._args)
        if self.is_mounted:
            self._render_parts()

    def append_output(self, text: str, omitted_lines: int = 0, cut: bool = False) -> None:
        """Output of the running command (a ``ToolOutput`` event); shown at most once a frame."""
        if not self.running:
            return
        if self._live is None:
            self._live = LiveTail()
        self._live.feed(text, omitted_lines, cut)
        if self._live_timer is None and self.is_mounted:
            # A frame, or longer when showing took long (heavily coloured long lines): the
            # live view never takes more than about a fifth of the event loop's time.
            self._live_timer = self.set_timer(max(FRAME, 4 * self._live_cost), self._show_live)

    def _show_live(self) -> None:
        self._live_timer = None
        if self.running:
            start = time.perf_counter()
            self._render_parts()
            self._live_cost = time.perf_counter() - start

    @property
    def live_lines(self) -> int:
        """Lines the running command printed so far (0 when it printed nothing yet)."""
        return self._live.line_count if self._live is not None else 0

    @property
    def hidden_lines(self) -> int:
        """Lines the collapsed preview leaves out (0: nothing to expand)."""
        return self.hidden_above + self.hidden_below

    @property
    def hidden_above(self) -> int:
        """Lines of shell output the collapsed preview leaves out before its last lines."""
        return self._hidden_output() if self.shell else 0

    @property
    def hidden_below(self) -> int:
        """Lines the collapsed preview leaves out after the lines it shows."""
        hidden = max(0, len(self._args) - ARG_PREVIEW_LINES)
        hidden += max(0, len(self._body) - BODY_PREVIEW_LINES)
        return hidden + (0 if self.shell else self._hidden_output())

    def _hidden_output(self) -> int:
        output_lines = self._live.line_count if self._live is not None else len(self._output)
        return max(0, output_lines - OUTPUT_PREVIEW_LINES)

    @property
    def collapsible(self) -> bool:
        return self.hidden_lines > 0 or self._long_lines

    def _render_parts(self) -> None:
        show_all = self.expanded or not self.collapsible
        mark = "…" if self.running else "✗" if self.is_error else "✓"
        self._header.update(Content(f"{mark} {self.tool_title}"))
        args = self._args
        body = self._body
        output = self._live_output(show_all) if self._live is not None else self._output
        if not show_all:
            args = [_clip_str(line) for line in args[:ARG_PREVIEW_LINES]]
            body = [_clip(line) for line in body[:BODY_PREVIEW_LINES]]
            if len(output) > OUTPUT_PREVIEW_LINES:
                # Shell output: the end matters most (errors, summaries); other tools: the start.
                output = (
                    output[-OUTPUT_PREVIEW_LINES:] if self.shell else output[:OUTPUT_PREVIEW_LINES]
                )
            output = [_clip(line) for line in output]
            if self.hidden_above:
                # The hidden lines are above the shown tail: the note is where they are.
                note = Text(f"▲ {self.hidden_above} earlier lines", style=MORE_LINE_STYLE)
                output = [note, *output]
        self._args_view.update(Content("\n".join(args)))
        self._args_view.display = bool(args)
        self._body_view.update(
            Content.from_rich_text(Text("\n").join(body)) if body else Content("")
        )
        self._body_view.display = bool(body)
        self._output_view.update(
            Content.from_rich_text(Text("\n").join(output)) if output else Content("")
        )
        self._output_view.display = bool(output)
        if self.collapsible:
            if self.expanded:
                more = "▲ collapse (click or Enter)"
            elif self.hidden_below:
                more = f"▼ {self.hidden_below} more lines (click or Enter to expand)"
            elif self.hidden_above:
                more = "▼ show all lines (click or Enter to expand)"
            else:
                more = "▼ long lines cut (click or Enter to expand)"
            self._more.update(Content(more))
        self._more.display = self.collapsible

    def _live_output(self, show_all: bool) -> list[Text]:
        """The running command's output: its last lines (all those kept when expanded, with a
        note of how many came before)."""
        live = self._live
        assert live is not None
        if not show_all:
            return live.tail(OUTPUT_PREVIEW_LINES)
        lines = live.tail(LIVE_LINES)
        if live.dropped:
            note = f"… {live.dropped} earlier lines (all of them are in the result at the end)"
            lines.insert(0, Text(note, style=MORE_LINE_STYLE))
        return lines

    def watch_expanded(self, expanded: bool) -> None:
        self._render_parts()

    def action_toggle_expanded(self) -> None:
        if self.collapsible:
            self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle_expanded()


def user_command_title(command: str, excluded: bool) -> str:
    """The header of a user's ``!command`` (``!!``: its output is not sent to the model)."""
    title = f"$ {' '.join(command.split())[:80]}"
    return f"{title}  · not sent to the model" if excluded else title


def others_appended_text(message: OthersAppended) -> str:
    """The one line saying another program appended to the open session."""
    entries = f"{message.count} {'entry' if message.count == 1 else 'entries'}"
    if message.continues:
        return f"Another program appended {entries} to this session; they continue this branch."
    return (
        f"Another program appended {entries} to this session on another branch (the tree shows "
        "them); your next prompt continues this branch."
    )


_EDIT_KEYS = frozenset({"edits", "oldText", "newText"})


def _get(arguments: Any, key: str) -> Any:
    return arguments.get(key) if isinstance(arguments, dict) else None


def _without(arguments: Any, keys: set[str] | frozenset[str]) -> Any:
    if not isinstance(arguments, dict):
        return arguments
    return {k: v for k, v in arguments.items() if k not in keys}


def _edits_text(arguments: Any) -> bool:
    """Whether an edit call carries text to show as a diff."""
    return isinstance(arguments, dict) and any(key in arguments for key in _EDIT_KEYS)


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


class ChatButton(Button):
    """ "Show N earlier/later entries": a click works it without taking the editor's focus."""

    FOCUS_ON_CLICK: ClassVar[bool] = False


class ChatView(
    UsesApp, KeptLines, KeptVerticalScrollBar, AnchoredFromTheFirstLayout, VerticalScroll
):
    """Renders ``app.store``'s active branch; streams the reply in progress.

    It follows the end while the reader is at the bottom; scrolled up, it stays put and sets
    :attr:`new_below` when something new arrives (the main screen shows a marker). A click or
    a mouse selection never takes the focus from the prompt editor.
    """

    DEFAULT_CSS: ClassVar[str] = """
    ChatView { height: 1fr; padding: 0 1 1 1; layout: stream; }
    ChatView > #load-earlier, ChatView > #load-later { width: 100%; margin: 1 0 0 0; }
    """
    FOCUS_ON_CLICK: ClassVar[bool] = False

    new_below: var[bool] = var(False)
    """Something was added at the end while the reader was scrolled up (cleared at the end)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._events: asyncio.Queue[object] = asyncio.Queue()
        # What is shown: the leaf it reflects, the ids walked from it, entries in order (their
        # widgets; the older ones of a fresh window are mounted just after the first frame).
        self._leaf_id: str | None = None
        self._path_ids: set[str] = set()
        self._mounted: list[tuple[str, list[Widget]]] = []
        self._unbuilt: list[Node] = []  # older entries of a fresh window, built after the frame
        self._count_started = 0  # the generation whose count of entries above has begun
        self._oldest: Node | None = None  # the oldest entry walked (earlier ones start above)
        self._hidden_before: int | None = 0  # visible entries above the window (None: counting)
        self._hidden_after = 0  # newer entries unmounted after scrolling far back
        self._load_earlier: Button | None = None
        self._load_later: Button | None = None
        self._calls: dict[str, dict[str, Any]] = {}
        self._generation = 0  # bumped by every rebuild (stale counts are dropped)
        # The reply in progress: text is shown at most once a frame (FRAME).
        self._reply: AssistantBlock | None = None
        self._thinking: ThinkingBlock | None = None
        self._sanitizer = StreamSanitizer()
        self._pending: list[str] = []
        self._flush_timer: Timer | None = None
        self._last_flush = 0.0
        self._running_tools: dict[str, ToolBlock] = {}
        self._user_commands: dict[str, ToolBlock] = {}  # the user's !commands being run
        self.tools_expanded = False  # Ctrl+O: every tool block expanded (new ones too)
        # Big entries of the window waiting for their parse (their placeholder note).
        self._to_load: list[tuple[Node, NoteBlock]] = []
        self._loading = 0  # parses under way in threads
        self._scrolled_away = False  # the reader scrolled up (Textual released the anchor)

    def compose(self) -> ComposeResult:
        yield from self._build()

    # ------------------------------------------------------------------ following the end

    def release_anchor(self) -> None:
        super().release_anchor()
        self._scrolled_away = True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._scrolled_away and new_value >= self.max_scroll_y:
            self._scrolled_away = False  # back at the end: Textual anchors again
        if not self._scrolled_away:
            self.new_below = False

    def jump_to_end(self) -> None:
        """Scroll to the newest entry and follow the end again (Ctrl+End, sending a prompt)."""
        self._scrolled_away = False
        self.new_below = False
        self.scroll_end(animate=False)

    def page(self, step: int) -> None:
        """One screenful up (-1) or down (1); paging down onto the end follows it again."""
        if step > 0 and self.scroll_y + self.scrollable_content_region.height >= self.max_scroll_y:
            self.jump_to_end()
        elif step > 0:
            self.scroll_page_down(animate=False)
        else:
            self.scroll_page_up(animate=False)

    def _note_new_output(self, item: object) -> None:
        shown_at_the_end = item is not _FILL and not isinstance(item, SessionSwitched | LeafMoved)
        if shown_at_the_end and not self.following:
            self.new_below = True

    @property
    def following(self) -> bool:
        """True while the view follows the end (the reader has not scrolled up), whether or
        not the layout has caught up with the latest appends yet."""
        if self.is_anchored:
            return not self._scrolled_away
        return self.scroll_y >= self.max_scroll_y - 1

    def on_unmount(self) -> None:
        collector.collect_fully_as_usual(self)  # a reply was streaming

    def on_mount(self) -> None:
        self.anchor()
        self.pitui.bridge.signal.subscribe(self, self._on_session_event)
        self._catch_up()
        self.run_worker(self._consume(), group="chat-stream", exclusive=True)
        self.call_after_refresh(self._events.put_nowait, _FILL)

    # ------------------------------------------------------------------ the queue

    def _catch_up(self, limit: int = WINDOW) -> None:
        """Entries appended between compose and the subscription: replay them in order (a
        rebuild if the leaf moved elsewhere)."""
        store = self.pitui.store
        missed: list[Node] = []
        cur = store.leaf
        while cur is not None and cur.id != self._leaf_id and len(missed) < limit:
            missed.append(cur)
            cur = cur.parent
        if not missed:
            return
        if (cur.id if cur is not None else None) != self._leaf_id:
            self._events.put_nowait(SessionSwitched(None))
            return
        for node in reversed(missed):
            self._events.put_nowait(EntryAppended(node.id, node.parent_id))

    def _on_session_event(self, message: object) -> None:
        if isinstance(message, AgentUpdate):
            self._events.put_nowait(message.event)
        elif isinstance(message, EntryAppended | LeafMoved | SessionSwitched):
            self._events.put_nowait(message)
        elif isinstance(message, OthersAppended):
            self._events.put_nowait(Notice(others_appended_text(message), "information"))

    def add_notice(self, text: str, severity: Severity = "information") -> None:
        """Show ``text`` at the end of the transcript, in order with what the session's events
        show (after the store changes made before this call: their events come first)."""
        self.call_next(self._events.put_nowait, Notice(text, severity))

    @property
    def notices(self) -> list[Notice]:
        """The notices shown (oldest first)."""
        return [block.notice for block in self.query(NoticeBlock)]

    async def _consume(self) -> None:
        """One consumer keeps events in order (deltas, then the stored message, ...)."""
        while True:
            item = await self._events.get()
            try:
                await self._handle(item)
                self._note_new_output(item)
            except Exception:  # never leave the pane dead: log it and show the store again
                log.exception("chat: applying %r failed", item)
                with contextlib.suppress(Exception):
                    await self.rebuild()
            finally:
                self._events.task_done()

    async def _handle(self, item: object) -> None:
        """Apply one event. Events may be stale: a rebuild reads the store as it is now, ahead
        of the events still queued, so an event only matters if the view differs from it."""
        if (
            self._hidden_after
            and not isinstance(item, SessionSwitched | _Loaded)
            and item is not _FILL
        ):
            await self.rebuild()  # something happens at the newest end: show it
            if isinstance(item, EntryAppended | LeafMoved) or item is _FLUSH:
                return
        if isinstance(item, MessageDelta) and item.kind == "text":
            text = self._sanitizer.feed(item.text)
            if text:
                self._pending.append(text)
                self._schedule_flush()
            return
        if item is _FLUSH:
            await self._flush_text()
            return
        if item is _FILL and not self.screen.is_current:
            # Another screen covers the chat (the tree opened at once after start): it gets
            # the interpreter; the window is completed when the chat shows again.
            self.set_timer(FILL_PAUSE, partial(self._events.put_nowait, _FILL))
            return
        if item is _FILL or item is _FILL_ALL:
            if not await self._fill_window(everything=item is _FILL_ALL):
                self.call_after_refresh(self._events.put_nowait, _FILL)  # the next slice
                return
            if self._to_load:
                # A parse holds the GIL: give the terminal writer a moment for the first frame.
                self.set_timer(LOAD_DELAY, self._start_loads)
            return
        if isinstance(item, _Loaded):
            await self._show_loaded(item)
            return
        await self._flush_text()
        if isinstance(item, Notice):
            await self.mount(NoticeBlock(item))
            return
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
        """Wait until every queued event has been applied and shown (tests)."""
        while True:
            await self._events.join()
            if self._pending:
                self._events.put_nowait(_FLUSH)
            elif self._unbuilt or any(
                w.parent is None for _, blocks in self._mounted for w in blocks
            ):
                self._events.put_nowait(_FILL_ALL)
            elif self._loading or self._to_load:
                if self._to_load:
                    self._start_loads()
                await asyncio.sleep(0.02)
            else:
                return

    # ------------------------------------------------------------------ building

    def visible_entries(self, path: list[Node] | None = None) -> list[Node]:
        nodes = path if path is not None else self.pitui.store.path_to()
        return [n for n in nodes if self._shows(n)]

    @staticmethod
    def _shows(node: Node) -> bool:
        return is_conversation(node.type, node.role)

    def _walk_back(self, start: Node | None, count: int) -> tuple[list[Node], Node | None]:
        """Up to ``count`` visible entries ending at ``start`` (oldest first), walking up the
        path (never the whole of it); and the oldest entry walked."""
        found: list[Node] = []
        oldest: Node | None = None
        cur = start
        while cur is not None and len(found) < count:
            if not cur.hidden:
                self._path_ids.add(cur.id)
                if self._shows(cur):
                    found.append(cur)
            oldest = cur
            cur = cur.parent
        found.reverse()
        return found, oldest

    def _build(self) -> list[Widget]:
        """Reset the shown state to the store's active branch; the widgets to mount first
        (the newest screenful; the rest of the window follows after the first frame)."""
        store = self.pitui.store
        self._generation += 1
        self._leaf_id = store.leaf_id
        self._path_ids = set()
        self._calls.clear()
        self._running_tools.clear()
        self._user_commands.clear()
        self._reply = self._thinking = None
        self._sanitizer = StreamSanitizer()
        self._pending.clear()
        entries, self._oldest = self._walk_back(store.leaf, WINDOW)
        self._hidden_after = 0
        self._load_later = None
        self._to_load = []
        # Only the newest screenful is built now; the rest of the window (and the count of
        # what is above it) after the first frame, in _fill_window.
        self._unbuilt = entries[:-FIRST_SCREEN]
        newest = entries[-FIRST_SCREEN:]
        self._mounted = [(node.id, self._blocks_or_placeholder(node)) for node in newest]
        above = self._oldest.parent if self._oldest is not None else None
        self._hidden_before = None if above is not None else 0
        self._load_earlier = None
        widgets: list[Widget] = []
        if self._hidden_before != 0:
            self._load_earlier = self._earlier_button()
            widgets.append(self._load_earlier)
        for _, blocks in self._mounted:
            widgets.extend(blocks)
        return widgets

    def _count_above(self, oldest: Node | None) -> int | None:
        """Visible entries above ``oldest`` on the path: counted now when the path is short,
        else in a worker thread (None until then)."""
        start = oldest.parent if oldest is not None else None
        if start is None:
            return 0
        if depth_of(start) <= SYNC_COUNT_DEPTH:
            return _count_visible(start)
        self._count_in_thread(start, self._generation)
        return None

    @work(thread=True, group="chat-count", exclusive=True, exit_on_error=False)
    def _count_in_thread(self, start: Node, generation: int) -> None:
        count = _count_visible(start)
        self.app.call_from_thread(self._counted, count, generation)

    def _counted(self, count: int, generation: int) -> None:
        if generation == self._generation and self._hidden_before is None:
            self._hidden_before = count
            self._update_buttons()

    async def _fill_window(self, everything: bool = True) -> bool:
        """Build and mount the older part of the window, above what the first frame showed
        (``everything``, or the next :data:`FILL_SLICE` entries up); count what is above the
        window. True when the window is complete."""
        if self._unbuilt:
            cut = 0 if everything else max(0, len(self._unbuilt) - FILL_SLICE)
            taken, self._unbuilt = self._unbuilt[cut:], self._unbuilt[:cut]
            older = [(node.id, self._blocks_or_placeholder(node)) for node in taken]
            self._mounted[:0] = older
        if self._hidden_before is None and self._count_started != self._generation:
            self._count_started = self._generation
            self._hidden_before = self._count_above(self._oldest)
            self._update_buttons()
        waiting = [w for _, blocks in self._mounted for w in blocks if w.parent is None]
        if not waiting:
            return not self._unbuilt
        anchor = next((w for _, blocks in self._mounted for w in blocks if w.parent is self), None)
        with self.app.batch_update():
            if anchor is not None:
                await self.mount_all(waiting, before=anchor)
            elif self._load_earlier is not None and self._load_earlier.parent is self:
                await self.mount_all(waiting, after=self._load_earlier)
            else:
                await self.mount_all(waiting)
        return not self._unbuilt

    async def rebuild(self) -> None:
        """Re-render the active branch (the newest window of entries)."""
        widgets = self._build()
        with self.app.batch_update():
            await self.remove_children()
            if widgets:
                await self.mount_all(widgets)
        self.scroll_end(animate=False)
        self.call_after_refresh(self._events.put_nowait, _FILL)

    def _earlier_button(self) -> Button:
        return ChatButton(self._earlier_label(), id="load-earlier", compact=True)

    def _earlier_label(self) -> str:
        if self._hidden_before is None:
            return "Show earlier entries"
        return f"Show {self._hidden_before} earlier entries"

    def _update_buttons(self) -> None:
        if self._load_earlier is not None:
            self._load_earlier.label = self._earlier_label()
        if self._load_later is not None:
            self._load_later.label = f"Show {self._hidden_after} later entries"

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "load-earlier":
            event.stop()
            await self.load_earlier()
        elif event.button.id == "load-later":
            event.stop()
            await self.rebuild()

    async def load_earlier(self) -> bool:
        """Mount the previous window of entries above; unmount the newest beyond
        ``MAX_MOUNTED`` (a "Show N later entries" button takes their place), so that scrolling
        back costs the same at every click and memory stays bounded. False: nothing earlier."""
        await self._fill_window()
        start = self._oldest.parent if self._oldest is not None else None
        if start is None:
            return False
        entries, oldest = self._walk_back(start, WINDOW)
        older = [(node.id, self.blocks_for(node)) for node in entries]
        first_shown = next((w[0] for _, w in self._mounted if w), None)
        self._oldest = oldest
        above = oldest.parent if oldest is not None else None
        if self._hidden_before is not None:
            self._hidden_before = max(0, self._hidden_before - len(entries))
        if above is None:
            self._hidden_before = 0
        self._mounted[:0] = older
        widgets = [w for _, blocks in older for w in blocks]
        dropped: list[tuple[str, list[Widget]]] = []
        excess = len(self._mounted) - MAX_MOUNTED
        live = self._reply is not None or self._thinking is not None or self._running_tools
        if excess > 0 and not live:  # a reply in progress keeps the newest end mounted
            dropped, self._mounted = self._mounted[-excess:], self._mounted[:-excess]
            self._hidden_after += len(dropped)
        with self.app.batch_update():
            # The newest go first: at most MAX_MOUNTED entries are ever mounted at once.
            gone = [w for _, blocks in dropped for w in blocks if w.parent is self]
            if gone:
                await self.remove_children(gone)
            if widgets:
                if self._load_earlier is not None and self._load_earlier.parent is self:
                    await self.mount_all(widgets, after=self._load_earlier)
                else:
                    await self.mount_all(widgets, before=0)
            if dropped and self._load_later is None:
                self._load_later = ChatButton("", id="load-later", compact=True)
                await self.mount(self._load_later)
            if self._hidden_before == 0 and self._load_earlier is not None:
                await self._load_earlier.remove()
                self._load_earlier = None
            self._update_buttons()
        if first_shown is not None:
            self.call_after_refresh(self.scroll_to_widget, first_shown, top=True, animate=False)
        return True

    async def _append_entry(self, entry_id: str) -> None:
        store = self.pitui.store
        node = store.node(entry_id)
        self._leaf_id = entry_id
        self._path_ids.add(entry_id)
        if not self._shows(node):
            return
        blocks = self.blocks_for(node)
        replaced: list[Widget] = []
        kept: Widget | None = None  # a preview that becomes the stored block as it is
        if node.type == "message" and node.role == "assistant":
            # The stored message replaces the streamed preview (exactly once).
            await self._flush_text(final=True)
            if self._thinking is not None and not self._thinking.collapsed:
                for block in blocks:
                    if isinstance(block, ThinkingBlock):
                        block.collapsed = False  # the reader had it open
            preview = self._reply
            for i, block in enumerate(blocks):
                if (
                    isinstance(block, AssistantBlock)
                    and preview is not None
                    and preview.parent is self
                    and block.whole_text == preview.source
                ):
                    # Already rendered: a long reply stays whole where the reader is (a
                    # stored one shows its first part and "show more").
                    blocks[i] = kept = preview
                    # No style depends on it: no restyle of every block of a long reply.
                    preview.remove_class("-streaming", update=False)
                    preview.view.grow_in_steps(1)
                    break
            replaced = [w for w in (self._thinking, self._reply) if w is not None and w is not kept]
            self._reply = self._thinking = None
            self._sanitizer = StreamSanitizer()
        elif node.type == "message" and node.role == "toolResult":
            message = store.read(node).get("message") or {}
            running = self._running_tools.pop(str(message.get("toolCallId")), None)
            if running is not None:
                replaced = [running]
                for block in blocks:  # the reader expanded it while it ran: keep it so
                    if isinstance(block, ToolBlock) and running.expanded:
                        block.set_reactive(ToolBlock.expanded, True)
        elif node.type == "message" and node.role == "bashExecution":
            command = (store.read(node).get("message") or {}).get("command")
            for call_id, running in list(self._user_commands.items()):
                if running.arguments.get("command") == command:  # its live block
                    del self._user_commands[call_id]
                    replaced = [running]
                    break
        self._mounted.append((entry_id, blocks))
        with self.app.batch_update():
            if kept is not None:
                index = blocks.index(kept)
                if blocks[:index]:
                    await self.mount_all(blocks[:index], before=kept)
                if blocks[index + 1 :]:
                    await self.mount_all(blocks[index + 1 :], after=kept)
            elif blocks:
                before = replaced[0] if replaced else None
                if before is not None and before.parent is self:
                    await self.mount_all(blocks, before=before)
                else:
                    await self.mount_all(blocks)
            for widget in replaced:
                if widget.parent is not None:
                    await widget.remove()
        await self._prune()

    async def _prune(self) -> None:
        """Unmount the oldest entries of a long live session (only while at the bottom)."""
        excess = len(self._mounted) - WINDOW
        if excess <= PRUNE_SLACK or not self.following:
            return
        dropped, self._mounted = self._mounted[:excess], self._mounted[excess:]
        first_kept = self._mounted[0][0] if self._mounted else None
        if first_kept is not None:
            self._oldest = self.pitui.store.node(first_kept)
        if self._hidden_before is not None:
            self._hidden_before += excess
        widgets = [w for _, blocks in dropped for w in blocks if w.parent is self]
        with self.app.batch_update():
            if widgets:
                await self.remove_children(widgets)
            if self._load_earlier is None:
                self._load_earlier = self._earlier_button()
                await self.mount(self._load_earlier, before=0)
            else:
                self._update_buttons()

    # ------------------------------------------------------------------ big entries

    def _blocks_or_placeholder(self, node: Node) -> list[Widget]:
        """An entry's widgets; for a big one (``BIG_ENTRY``), a note that holds its place until
        it is parsed in a thread after the first frame (its widgets are built then too)."""
        if node.length <= BIG_ENTRY:
            return self.blocks_for(node)
        note = NoteBlock(f"Loading a {node.length / 1e6:.1f} MB entry…", classes="-loading")
        self._to_load.append((node, note))
        return [note]

    def _start_loads(self) -> None:
        """Read the waiting big entries' lines and parse them in threads (one at a time)."""
        if self._loading:
            return
        while self._to_load:
            node, _ = self._to_load.pop(0)
            if node.data is not None:  # parsed already (the projection keeps path entries)
                self._events.put_nowait(_Loaded(node.id, node.data, self._generation))
                continue
            try:
                raw = self.pitui.store.raw_line(node)
            except Exception:
                log.exception("chat: reading entry %s failed", node.id)
                self._events.put_nowait(_Loaded(node.id, None, self._generation))
                continue
            self._loading += 1
            self._parse_in_thread(node.id, raw, self._generation)
            return

    @work(thread=True, group="chat-load", exit_on_error=False)
    def _parse_in_thread(self, entry_id: str, raw: bytes, generation: int) -> None:
        from pitui.session import codec

        entry: dict[str, Any] | None
        try:
            parsed = codec.loads(raw)
            entry = parsed if isinstance(parsed, dict) else None
        except Exception:  # always answer: the placeholder is replaced either way
            log.exception("chat: parsing entry %s failed", entry_id)
            entry = None
        loaded = _Loaded(entry_id, entry, generation, threaded=True)
        self.app.call_from_thread(self._events.put_nowait, loaded)

    async def _show_loaded(self, item: _Loaded) -> None:
        """Put a parsed big entry's widgets where its placeholder is (if still shown)."""
        if item.threaded:
            self._loading -= 1
        try:
            if item.generation != self._generation:
                return
            ids = [entry_id for entry_id, _ in self._mounted]
            index = ids.index(item.entry_id) if item.entry_id in ids else -1
            if index < 0:
                return
            old = self._mounted[index][1]
            if item.entry is None:
                blocks: list[Widget] = [
                    NoteBlock("This entry could not be read.", classes="-error")
                ]
            else:
                blocks = self._entry_blocks(self.pitui.store.node(item.entry_id), item.entry)
            self._mounted[index] = (item.entry_id, blocks)
            placed = [w for w in old if w.parent is self]
            if placed:
                with self.app.batch_update():
                    if blocks:
                        await self.mount_all(blocks, before=placed[0])
                    await self.remove_children(placed)
        finally:
            self._start_loads()

    # ------------------------------------------------------------------ entry → blocks

    def blocks_for(self, node: Node) -> list[Widget]:
        """The widgets for one entry."""
        store = self.pitui.store
        entry = store.read(node)  # not kept: far-off entries do not stay in memory
        return self._entry_blocks(node, entry)

    def _entry_blocks(self, node: Node, entry: dict[str, Any]) -> list[Widget]:
        """The widgets for one entry, from its parsed line."""
        if node.type == "compaction":
            tokens = entry.get("tokensBefore")
            title = f"Compacted from {tokens:,} tokens" if isinstance(tokens, int) else "Compacted"
            summary = strip_escapes(str(entry.get("summary") or ""))
            return [SummaryBlock(summary, title=title, collapsed=True, classes="compaction")]
        if node.type == "branch_summary":
            summary = strip_escapes(str(entry.get("summary") or ""))
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
            return [NoteBlock(f"[{kind}] {text}", classes="custom")]
        message = entry.get("message") or {}
        role = message.get("role")
        if role == "user":
            text = _text_blocks(typed_content(message))
            files = "\n".join(attachment_line(f) for f in attached_files(message))
            text = f"{text}\n{files}" if text and files else text or files
            return [UserBlock(strip_escapes(text))]
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
                    title=user_command_title(command, bool(message.get("excludeFromContext"))),
                    expanded=self.tools_expanded,
                )
            ]
        if role == "custom":
            return [NoteBlock(strip_escapes(_text_blocks(message.get("content"))))]
        return []

    def _assistant_blocks(self, message: dict[str, Any]) -> list[Widget]:
        """Thinking and text blocks, then a note for an error, an abort or the length limit.

        Bounded (see :mod:`pitui.ui.widgets.bounded`): at most ``TEXT_BLOCKS`` widgets and
        ``MARKDOWN_CHARS`` characters of text are shown at first; the text of the rest waits
        behind the last text block's "show more" (a message of 200k blocks mounts a few
        widgets, a 10 MB reply renders its first part)."""
        out: list[Widget] = []
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        budget = MARKDOWN_CHARS
        shown: list[tuple[str, str, str]] = []  # (kind, text shown, text hidden) per widget
        later: list[str] = []  # raw texts of the blocks past the bound (behind "show more")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "toolCall":
                self._calls[str(block.get("id"))] = block
            elif len(shown) >= TEXT_BLOCKS or budget <= 0:
                # Past the bound: only kept (sanitized when the reader asks for them).
                raw = block.get("text")
                if kind == "text" and isinstance(raw, str) and raw and not raw.isspace():
                    later.append(raw)
            elif kind == "thinking" and block.get("thinking"):
                shown.append(("thinking", strip_escapes(str(block["thinking"])), ""))
            elif kind == "text" and str(block.get("text") or "").strip():
                text = strip_escapes(str(block["text"]))
                end = cut_at(text, 0, budget)
                budget -= end
                shown.append(("text", text[:end], text[end:]))
        last = -1  # the text widget that holds the later blocks
        if later:
            last = max((i for i, (kind, _, _) in enumerate(shown) if kind == "text"), default=-1)
            if last < 0:
                shown.append(("text", "", ""))
                last = len(shown) - 1
        for i, (kind, text, hidden) in enumerate(shown):
            if kind == "thinking":
                out.append(ThinkingBlock(text, collapsed=True))
            else:
                extra = later if i == last else None
                out.append(AssistantBlock(text, rest=hidden, later=extra))
        stop = message.get("stopReason")
        if stop == "error":
            error = strip_escapes(str(message.get("errorMessage") or "unknown error"))
            out.append(NoteBlock(Content(f"Error: {error}"), classes="-error"))
        elif stop == "aborted":
            out.append(NoteBlock(Content("Aborted."), classes="-aborted"))
        elif stop == "length":
            output = (message.get("usage") or {}).get("output")
            size = f" ({output:,} tokens)" if isinstance(output, int) and output > 0 else ""
            note = f"The reply hit the output limit{size}."
            out.append(NoteBlock(Content(note), classes="-aborted"))
        return out

    def _find_call(self, node: Node, call_id: str) -> dict[str, Any] | None:
        """The tool call a result answers: remembered, else in the nearest assistant above.
        Taken out once used, so that scrolling back does not keep every call (and its
        arguments) seen so far."""
        call = self._calls.pop(call_id, None)
        if call is not None:
            return call
        store = self.pitui.store
        parent = node.parent
        while parent is not None:
            if parent.type == "message" and parent.role == "assistant":
                for block in tool_calls(store.read(parent).get("message")):
                    self._calls.setdefault(str(block.get("id")), block)
                return self._calls.pop(call_id, None)
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
            details=message.get("details"),
            expanded=self.tools_expanded,
        )

    # ------------------------------------------------------------------ live updates

    async def _on_agent_event(self, event: object) -> None:
        if isinstance(event, MessageStart) and event.role == "assistant":
            # Until the run ends, fewer full collections (each holds the screen).
            collector.collect_fully_less_often(self)
            # A preview never replaced by its stored message would be stale: drop it.
            for stale in (self._thinking, self._reply):
                if stale is not None:
                    await stale.remove()
            self._reply = self._thinking = None
            self._sanitizer = StreamSanitizer()
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
            block = ToolBlock(
                event.name,
                event.arguments,
                None,
                shell=event.name in SHELL_TOOLS,
                expanded=self.tools_expanded,
            )
            self._running_tools[event.call_id] = block
            await self.mount(block)
        elif isinstance(event, ToolOutput):
            running = self._running_tools.get(event.call_id) or self._user_commands.get(
                event.call_id
            )
            if running is not None:
                running.append_output(event.text, event.omitted_lines, event.cut)
        elif isinstance(event, UserCommandStart):
            block = ToolBlock(
                "bash",
                {"command": event.command},
                None,
                shell=True,
                title=user_command_title(event.command, event.excluded),
                expanded=self.tools_expanded,
            )
            self._user_commands[event.call_id] = block
            await self.mount(block)
        elif isinstance(event, UserCommandEnd):
            running = self._user_commands.get(event.call_id)
            if running is not None and event.message is None:  # it did not run
                del self._user_commands[event.call_id]
                await running.remove()
            elif running is not None and event.entry_id is None:  # stored when the run ends
                running.set_output(str((event.message or {}).get("output") or ""))
        elif isinstance(event, RunEnded):
            collector.collect_fully_as_usual(self)
            if self._reply is not None:  # no stored message came (an error): its own height
                self._reply.view.grow_in_steps(1)
            leftovers = list(self._running_tools.values())
            self._running_tools.clear()
            for running in leftovers:
                await running.remove()

    def _schedule_flush(self) -> None:
        """Show the pending text at the next frame (at most one update per ``FRAME``: an
        update renders only the reply's last block again, at any length of the reply). When
        that block is slow to render (a long code block or table: tens of ms), updates come
        less often, so that rendering never takes more than about a fifth of the event loop's
        time and keys are not kept waiting behind it."""
        if self._flush_timer is not None:
            return
        # What the last block costs to render again (blocks that complete are rendered once).
        cost = self._reply.view.open_cost if self._reply is not None else 0.0
        interval = max(FRAME, 4 * cost)
        delay = max(0.001, self._last_flush + interval - time.monotonic())
        self._flush_timer = self.set_timer(delay, self._request_flush)

    def _request_flush(self) -> None:
        self._flush_timer = None
        if self._pending:
            self._events.put_nowait(_FLUSH)

    async def _flush_text(self, final: bool = False) -> None:
        """Append the text received since the last frame to the preview (in event order)."""
        if final:
            rest = self._sanitizer.flush()
            if rest:
                self._pending.append(rest)
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._last_flush = time.monotonic()
        if self._reply is None:
            self._reply = AssistantBlock("", classes="-streaming")
            # Past a screenful it grows a quarter of the chat's height at a time (see
            # MarkdownView); a shorter reply never has blank lines to lose when it is stored.
            height = self.size.height
            self._reply.view.grow_in_steps(height // STREAM_STEPS, after=height)
            await self.mount(self._reply)
        await self._reply.append(text)

    # ------------------------------------------------------------------ tool blocks

    def toggle_tools(self) -> bool:
        """Expand every tool block, or collapse them all (Ctrl+O); blocks shown later follow.
        Returns whether they are now expanded."""
        self.tools_expanded = not self.tools_expanded
        with self.app.batch_update():
            for block in self.query(ToolBlock):
                block.expanded = self.tools_expanded
        return self.tools_expanded

    # ------------------------------------------------------------------ inspection

    def assistant_blocks(self) -> list[AssistantBlock]:
        """Stored assistant text blocks (not the streamed preview)."""
        return [b for b in self.query(AssistantBlock) if not b.has_class("-streaming")]
