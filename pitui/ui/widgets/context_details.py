"""``ContextDetails``: the details pane's Context tab: what the model would see if the leaf were
at the highlighted entry: the header (tokens against the window), the system prompt by section,
and one row per projected message (with compaction, kept, edited and omitted marks).

Context views are cached per entry id. Real (tiktoken) token counts run in a thread worker and
fill in when ready ("counting…" meanwhile); they are cached too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, OptionList, Static
from textual.widgets.option_list import Option

from pitui.lru import LruCache
from pitui.text import strip_escapes
from pitui.ui.widgets.details_tab import DetailsTab, TabOptions
from pitui.ui.widgets.inspector_views import (
    CACHE_SIZE,
    HEADER_ROW,
    KEY_STYLE,
    ContextRow,
    ContextView,
    build_context_view,
    heading,
    join_lines,
    literal_title,
    more_blocks,
    plain,
    row_prompt,
    tokens_of,
    tool_line,
)

if TYPE_CHECKING:
    from pitui.session.projection import Projection

SECTION_CAP = 50
"""System prompt sections (and tools) listed; the rest is counted in a note (a prompt of 50k
sections would mount 100k widgets)."""

Counts = tuple[int, list[int], str]
"""A tiktoken count: total, per message, encoding name."""


class ContextDetails(DetailsTab):
    """The projected context at the highlighted entry (reads the pane's :class:`TabOptions`:
    tiktoken on or off, the model, its window, the rows shown before "show more")."""

    key = "context"
    title = "Context"

    DEFAULT_CSS: ClassVar[str] = """
    ContextDetails { height: 1fr; }
    ContextDetails > Vertical { height: 1fr; }
    ContextDetails #context-head { padding: 0 1; height: auto; }
    ContextDetails #context-system { height: auto; max-height: 50%; }
    ContextDetails #context-system-scroll { height: auto; max-height: 20; padding: 0; }
    ContextDetails Collapsible.-section { border-top: none; padding-bottom: 0; }
    ContextDetails .-tools { padding: 0 1; margin-top: 1; }
    ContextDetails #context-rows {
        height: 1fr;
        min-height: 4;
        border: none;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    class _Counted(Message):
        """A tiktoken count finished (posted from the worker thread)."""

        def __init__(self, entry_id: str, result: Counts | None, error: str | None = None) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.result = result
            self.error = error

    def __init__(self, options: TabOptions | None = None, *, id: str | None = None) -> None:
        super().__init__(options, id=id)
        self.tiktoken_enabled = self.options.tiktoken
        self.model_name = self.options.model_name
        self.context_window = self.options.context_window
        self.row_cap = max(1, self.options.row_cap)
        self.view: ContextView | None = None
        self._views: LruCache[str, ContextView] = LruCache(CACHE_SIZE)
        self._counts: LruCache[str, Counts] = LruCache(4 * CACHE_SIZE)
        self._count_errors: dict[str, str] = {}
        self._counting: set[str] = set()
        self._row_limit = self.row_cap
        self._row_offset = 0  # option index of the first message row
        self._system_key: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="context-box"):
            yield Static(Content(""), id="context-head", markup=False)
            with Collapsible(title="System prompt", id="context-system"):
                yield VerticalScroll(id="context-system-scroll")
            yield OptionList(id="context-rows", markup=False)

    def forget(self) -> None:
        """Drop cached views and counts (after a label change, a model or session switch)."""
        self._views.clear()
        self._counts.clear()
        self._count_errors.clear()

    # ------------------------------------------------------------------ showing

    def show(self, entry_id: str | None) -> None:
        if entry_id != self.entry_id:
            self._row_limit = self.row_cap
        self.entry_id = entry_id
        store = self.pitui.store
        rows = self.query_one("#context-rows", OptionList)
        head = self.query_one("#context-head", Static)
        system = self.query_one("#context-system", Collapsible)
        if entry_id is None or entry_id not in store:
            self.view = None
            head.update(Content("Nothing selected." if entry_id is None else "Entry not found."))
            system.display = False
            rows.clear_options()
            return
        view = self.view = self._view_for(entry_id)
        self._start_count(view)
        head.update(self._head(view))
        self._fill_system(view)
        self._fill_rows(view)

    def _view_for(self, entry_id: str) -> ContextView:
        view = self._views.get(entry_id)
        if view is not None:
            return view
        view = build_context_view(
            self.pitui.store,
            entry_id,
            agent=self.pitui.agent,
            model_name=self.model_name,
            window=self.context_window,
        )
        self._views.put(entry_id, view)
        return view

    def _tiktoken_state(self, view: ContextView) -> Literal["…", "-"] | None:
        if not self.tiktoken_enabled or view.entry_id in self._count_errors:
            return "-"
        if view.entry_id not in self._counts:
            return "…"
        return None

    def _head(self, view: ContextView) -> Content:
        messages = len(view.projection.messages)
        window = view.window
        if window:
            share = 100 * view.used / window
            used = Content.assemble(
                (f"{view.used:,}", "bold"), f" / {window:,} tokens ({share:.1f}%)"
            )
        else:
            used = Content.assemble((f"{view.used:,}", "bold"), " tokens / unknown window")
        how = "last usage + estimate" if view.from_usage else "chars/4 estimate"
        model = view.model_name or "unknown model"
        first = Content.assemble(
            used, (f"  ({how}) · {messages} messages · ", KEY_STYLE), Content(strip_escapes(model))
        )
        counts = self._counts.get(view.entry_id)
        if not self.tiktoken_enabled:
            tiktoken: Content = Content.styled("tiktoken off", KEY_STYLE)
        elif view.entry_id in self._count_errors:
            tiktoken = Content.styled("tiktoken unavailable", "$warning")
        elif counts is None:
            tiktoken = Content.styled("tiktoken counting…", KEY_STYLE)
        else:
            tiktoken = Content.assemble(
                ("tiktoken ", KEY_STYLE), (f"{counts[0]:,}", "bold"), (f" ({counts[2]})", KEY_STYLE)
            )
        second = Content.assemble(
            ("chars/4 ", KEY_STYLE), (f"{view.estimate:,}", "bold"), (" · ", KEY_STYLE), tiktoken
        )
        if view.projection.compaction_id:
            second = second + Content.styled(
                f" · compacted at {view.projection.compaction_id}", KEY_STYLE
            )
        return join_lines([first, second])

    def _fill_system(self, view: ContextView) -> None:
        system = self.query_one("#context-system", Collapsible)
        message = view.projection.system_message
        tools = view.projection.tools
        if not message:
            system.display = False
            self._system_key = None
            return
        system.display = True
        names = view.projection.tool_names
        title = (
            f"System prompt · {len(view.sections)} sections · {len(names)} tools · "
            f"{view.system_tokens:,} tokens (chars/4)"
        )
        system.title = literal_title(title)
        key = (tuple(view.sections), tuple(names))
        if key == self._system_key:
            return
        self._system_key = key
        scroll = self.query_one("#context-system-scroll", VerticalScroll)
        children: list[Widget] = []
        for section, text in view.sections[:SECTION_CAP]:
            children.append(
                Collapsible(
                    Static(plain(text), markup=False),
                    title=literal_title(f"{section} · {tokens_of(text):,} tokens"),
                    classes="-section",
                )
            )
        if len(view.sections) > SECTION_CAP:
            hidden = more_blocks(len(view.sections) - SECTION_CAP, "sections")
            children.append(Static(hidden, classes="-more-sections", markup=False))
        tool_lines = [heading(f"tools ({len(names)})")]
        tool_lines += [tool_line(t) for t in tools[:SECTION_CAP] if isinstance(t, dict)]
        if len(tools) > SECTION_CAP:
            tool_lines.append(more_blocks(len(tools) - SECTION_CAP, "tools"))
        children.append(Static(join_lines(tool_lines), classes="-tools", markup=False))
        scroll.remove_children()
        scroll.mount_all(children)

    def _fill_rows(self, view: ContextView) -> None:
        rows = self.query_one("#context-rows", OptionList)
        state = self._tiktoken_state(view)
        counts = self._counts.get(view.entry_id)
        options: list[Option] = [Option(HEADER_ROW, id="header", disabled=True)]
        self._row_offset = len(options)
        shown = view.rows[: self._row_limit]
        for index, row in enumerate(shown):
            options.append(
                Option(row_prompt(row, self._row_tiktoken(row, counts, state)), id=f"row-{index}")
            )
        hidden = len(view.rows) - len(shown)
        if hidden > 0:
            more = min(hidden, self.row_cap)
            options.append(
                Option(
                    Content.styled(f"Show {more:,} more ({hidden:,} not shown)", "bold $accent"),
                    id="more",
                )
            )
        if not view.rows:
            options.append(Option(Content.styled("(no messages)", KEY_STYLE), disabled=True))
        rows.set_options(options)

    @staticmethod
    def _row_tiktoken(
        row: ContextRow, counts: Counts | None, state: Literal["…", "-"] | None
    ) -> int | Literal["…", "-"]:
        if state is not None:
            return state
        if counts is None or row.message_index is None or row.message_index >= len(counts[1]):
            return "-"
        return counts[1][row.message_index]

    def _update_row_counts(self, view: ContextView) -> None:
        rows = self.query_one("#context-rows", OptionList)
        state = self._tiktoken_state(view)
        counts = self._counts.get(view.entry_id)
        for index, row in enumerate(view.rows[: self._row_limit]):
            option_index = self._row_offset + index
            if option_index >= rows.option_count:
                break
            prompt = row_prompt(row, self._row_tiktoken(row, counts, state))
            rows.replace_option_prompt_at_index(option_index, prompt)

    @on(OptionList.OptionSelected, "#context-rows")
    def _row_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        view = self.view
        option_id = event.option.id
        if view is None or option_id is None:
            return
        if option_id == "more":
            rows = self.query_one("#context-rows", OptionList)
            highlighted = rows.highlighted
            self._row_limit += self.row_cap
            self._fill_rows(view)
            if highlighted is not None:
                rows.highlighted = min(highlighted, rows.option_count - 1)
            return
        if option_id.startswith("row-"):
            row = view.rows[int(option_id[4:])]
            self.post_message(self.JumpRequested(row.entry_id))

    # ------------------------------------------------------------------ tiktoken

    def _start_count(self, view: ContextView) -> None:
        entry_id = view.entry_id
        if (
            not self.tiktoken_enabled
            or entry_id in self._counts
            or entry_id in self._count_errors
            or entry_id in self._counting
        ):
            return
        self._counting.add(entry_id)
        projection, model = view.projection, view.model_name
        self.run_worker(
            lambda: self._count_tokens(entry_id, projection, model),
            thread=True,
            group="details-tiktoken",
            exit_on_error=False,
            description=f"tiktoken {entry_id}",
        )

    def _count_tokens(self, entry_id: str, projection: Projection, model: str | None) -> None:
        """Runs on a worker thread."""
        from pitui.compaction.tiktoken_count import TiktokenEstimator

        try:
            estimator = TiktokenEstimator.for_model(model)
            total, per = estimator.count_projection(projection)
        except Exception as exc:  # offline without a local encoding, a tiktoken bug
            self.post_message(self._Counted(entry_id, None, f"{type(exc).__name__}: {exc}"))
            return
        # Posted even if nobody shows this entry any more: the counts are cached for later.
        self.post_message(self._Counted(entry_id, (total, per, estimator.encoding_name)))

    @on(_Counted)
    def _counted(self, event: ContextDetails._Counted) -> None:
        event.stop()
        self._counting.discard(event.entry_id)
        if event.result is not None:
            self._counts.put(event.entry_id, event.result)
        else:
            self._count_errors[event.entry_id] = event.error or "unavailable"
        view = self.view
        if view is not None and view.entry_id == event.entry_id and self.is_mounted:
            self.query_one("#context-head", Static).update(self._head(view))
            self._update_row_counts(view)
