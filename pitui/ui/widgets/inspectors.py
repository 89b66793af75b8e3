"""The tree browser's details pane: the highlighted entry, the context the model would see if
the leaf were there, and the compaction in effect.

``DetailsPane.show(entry_id)`` is called on every cursor move: it only records the id and
restarts a short debounce timer. When the timer fires, only the visible tab is rebuilt; the
others are rebuilt when they are activated. Context views are cached per entry id, and real
(tiktoken) token counts run in a thread worker, filled in when ready ("counting…" meanwhile).

Everything shown comes from the session file and is untrusted: it goes through ``Content(...)``
(never parsed as markup) after escape sequences are removed; tool output keeps SGR colours only;
compaction summaries are rendered as Markdown on purpose (brackets stay literal there).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import (
    Button,
    Collapsible,
    Markdown,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.option_list import Option

from pitui.session.errors import EntryNotFoundError
from pitui.text import strip_escapes
from pitui.ui.widgets.files_tab import FilesTab  # checkpoints wiring (issue 13)
from pitui.ui.widgets.inspector_views import (
    _KEY,
    CACHE_SIZE,
    DEBOUNCE,
    HEADER_ROW,
    ROW_CAP,
    TABS,
    CompactionView,
    ContextRow,
    ContextView,
    TabName,
    _heading,
    _join,
    _literal_title,
    _tool_line,
    build_compaction_view,
    build_context_view,
    compaction_facts,
    compaction_files,
    entry_body,
    entry_meta,
    plain,
    raw_json,
    row_prompt,
    tokens_of,
)

if TYPE_CHECKING:
    from pitui.session.projection import Projection
    from pitui.session.store import SessionStore

__all__ = [
    "ContextRow",
    "DetailsPane",
    "TabName",
    "build_compaction_view",
    "build_context_view",
    "entry_body",
    "entry_meta",
]


class DetailsPane(Widget):
    """Entry / Context / Compaction details for the tree browser's highlighted entry.

    ``show(entry_id)`` is cheap (debounced); ``set_tab(name)`` switches tabs; ``JumpTo`` is
    posted when the user asks to go to another entry (the compaction's first kept entry, or a
    row of the context list).
    """

    DEFAULT_CSS: ClassVar[str] = """
    DetailsPane { height: 1fr; width: 1fr; }
    DetailsPane > TabbedContent { height: 1fr; }
    DetailsPane > TabbedContent > ContentSwitcher { height: 1fr; }
    DetailsPane TabPane { height: 1fr; padding: 0; }
    DetailsPane VerticalScroll { height: 1fr; padding: 0 1; }
    DetailsPane .-note { color: $text-muted; }
    DetailsPane #entry-meta { margin-bottom: 1; }
    DetailsPane #entry-raw { margin-top: 1; }
    DetailsPane #context-head { padding: 0 1; height: auto; }
    DetailsPane #context-system { height: auto; max-height: 50%; }
    DetailsPane #context-system-scroll { height: auto; max-height: 20; padding: 0; }
    DetailsPane Collapsible.-section { border-top: none; padding-bottom: 0; }
    DetailsPane .-tools { padding: 0 1; margin-top: 1; }
    DetailsPane #context-rows {
        height: 1fr;
        min-height: 4;
        border: none;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    DetailsPane #jump-first-kept { margin: 1 0; }
    DetailsPane #compaction-summary { margin: 0; padding: 0; }
    DetailsPane #compaction-summary-title { margin-top: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "jump_first_kept", "Jump to first kept", show=False),
    ]

    class JumpTo(Message):
        """The user asked to go to ``entry_id`` (move the tree cursor there)."""

        def __init__(self, pane: DetailsPane, entry_id: str) -> None:
            super().__init__()
            self.pane = pane
            self.entry_id = entry_id

        @property
        def control(self) -> DetailsPane:
            return self.pane

    class _Counted(Message):
        """A tiktoken count finished (posted from the worker thread)."""

        def __init__(
            self,
            entry_id: str,
            result: tuple[int, list[int], str] | None,
            error: str | None = None,
        ) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.result = result
            self.error = error

    def __init__(
        self,
        store: SessionStore | None = None,
        *,
        tab: TabName = "entry",
        tiktoken: bool = True,
        model_name: str | None = None,
        context_window: int | None = None,
        debounce: float = DEBOUNCE,
        row_cap: int = ROW_CAP,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._store = store
        self._initial_tab: TabName = tab
        self.tiktoken_enabled = tiktoken
        self.model_name = model_name
        self.context_window = context_window
        self.debounce = debounce
        self.row_cap = max(1, row_cap)
        self.entry_id: str | None = None
        self._pending: str | None = None
        self._timer: Timer | None = None
        self._last_flush = -math.inf
        self._stale: set[TabName] = set(TABS)
        self._views: OrderedDict[str, ContextView] = OrderedDict()
        self._counts: OrderedDict[str, tuple[int, list[int], str]] = OrderedDict()
        self._count_errors: dict[str, str] = {}
        self._counting: set[str] = set()
        self._context_view: ContextView | None = None
        self._row_limit = self.row_cap
        self._row_offset = 0  # option index of the first message row
        self._system_key: Any = None
        self._compaction: CompactionView | None = None
        self._entry: dict[str, Any] | None = None

    # ------------------------------------------------------------------ public API

    @property
    def store(self) -> SessionStore:
        if self._store is not None:
            return self._store
        return cast("SessionStore", getattr(self.app, "store"))  # noqa: B009

    @property
    def active_tab(self) -> TabName:
        try:
            active = self.query_one(TabbedContent).active
        except NoMatches:
            return self._initial_tab
        name = active.removeprefix("tab-")
        return cast(TabName, name) if name in TABS else self._initial_tab

    @property
    def compaction_view(self) -> CompactionView | None:
        """The compaction shown in the Compaction tab (``None``: none on the path)."""
        return self._compaction

    @property
    def context_view(self) -> ContextView | None:
        return self._context_view

    def show(self, entry_id: str | None) -> None:
        """Show ``entry_id``. Cheap: the first call after a pause applies at once, calls that
        follow within ``debounce`` seconds only restart a timer (the last one wins)."""
        self._pending = entry_id
        if not self.is_mounted:
            return  # applied on mount
        idle = self._timer is None and time.monotonic() - self._last_flush >= self.debounce
        if self.debounce <= 0 or idle:
            self._flush()
        else:
            # Restart the wait (Timer.reset only takes effect after the current interval).
            if self._timer is not None:
                self._timer.stop()
            self._timer = self.set_timer(self.debounce, self._debounced, name="details-debounce")

    def show_now(self, entry_id: str | None) -> None:
        """Show ``entry_id`` at once (no debounce)."""
        self._pending = entry_id
        if self.is_mounted:
            self._flush()

    def set_tab(self, tab: TabName) -> None:
        if tab not in TABS:
            raise ValueError(f"Unknown details tab {tab!r}: use one of {', '.join(TABS)}.")
        try:
            tabs = self.query_one(TabbedContent)
        except NoMatches:  # not composed yet
            self._initial_tab = tab
            return
        tabs.active = f"tab-{tab}"

    def refresh_entry(self) -> None:
        """Forget cached views and counts and rebuild the visible tab (after a label change,
        a model change, or a session switch)."""
        self._views.clear()
        self._counts.clear()
        self._count_errors.clear()
        self._stale = set(TABS)
        self._refresh_active()

    def jump_to_first_kept(self) -> bool:
        """Post ``JumpTo`` for the compaction's first kept entry; False when there is none."""
        view = self._compaction
        if view is None or not view.first_kept or view.first_kept_text is None:
            return False
        self.post_message(self.JumpTo(self, view.first_kept))
        return True

    # ------------------------------------------------------------------ compose

    def compose(self) -> ComposeResult:
        with TabbedContent(initial=f"tab-{self._initial_tab}"):
            with TabPane("Entry", id="tab-entry"), VerticalScroll(id="entry-scroll"):
                yield Static(Content("Nothing selected."), id="entry-meta", markup=False)
                yield Static(Content(""), id="entry-body", markup=False)
                with Collapsible(title="Raw JSON", id="entry-raw"):
                    yield Static(Content(""), id="entry-raw-text", markup=False)
            with TabPane("Context", id="tab-context"), Vertical(id="context-box"):
                yield Static(Content(""), id="context-head", markup=False)
                with Collapsible(title="System prompt", id="context-system"):
                    yield VerticalScroll(id="context-system-scroll")
                yield OptionList(id="context-rows", markup=False)
            with TabPane("Compaction", id="tab-compaction"), VerticalScroll(id="compaction-scroll"):
                yield Static(Content(""), id="compaction-head", markup=False)
                yield Static(Content(""), id="compaction-facts", markup=False)
                yield Button("Jump to first kept entry (j)", id="jump-first-kept")
                yield Static(Content(""), id="compaction-files", markup=False)
                yield Static(_heading("Summary"), id="compaction-summary-title", markup=False)
                yield Markdown("", id="compaction-summary", open_links=False)
            with TabPane("Files", id="tab-files"):  # checkpoints wiring (issue 13)
                yield FilesTab(id="files-tab")

    def on_mount(self) -> None:
        self._set_compaction_visible(False)
        if self._pending is not None:
            self._flush()

    # ------------------------------------------------------------------ refresh machinery

    def _debounced(self) -> None:
        self._timer = None
        self._flush()

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        entry_id = self._pending
        if entry_id != self.entry_id:
            self.entry_id = entry_id
            self._row_limit = self.row_cap
            self._stale = set(TABS)
        self._refresh_active()
        self._last_flush = time.monotonic()

    def _refresh_active(self) -> None:
        tab = self.active_tab
        if tab in self._stale:
            self._stale.discard(tab)
            {
                "entry": self._refresh_entry,
                "context": self._refresh_context,
                "compaction": self._refresh_compaction,
                "files": self._refresh_files,  # checkpoints wiring (issue 13)
            }[tab]()

    def _refresh_files(self) -> None:
        """The Files tab (checkpoints wiring, issue 13): computed in its own worker."""
        self.query_one(FilesTab).show(self.entry_id)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        event.stop()
        self._refresh_active()
        self.refresh_bindings()

    # ------------------------------------------------------------------ entry tab

    def _entry_or_none(self) -> dict[str, Any] | None:
        if self.entry_id is None:
            return None
        try:
            return self.store.get(self.entry_id)
        except EntryNotFoundError:
            return None

    def _refresh_entry(self) -> None:
        meta = self.query_one("#entry-meta", Static)
        body = self.query_one("#entry-body", Static)
        entry = self._entry = self._entry_or_none()
        if entry is None:
            missing = "Nothing selected." if self.entry_id is None else "Entry not found: "
            meta.update(Content(missing + (self.entry_id or "")))
            body.update(Content(""))
            self.query_one("#entry-raw", Collapsible).display = False
            return
        meta.update(entry_meta(entry, self.store.label_of(str(entry.get("id")))))
        body.update(entry_body(entry))
        raw = self.query_one("#entry-raw", Collapsible)
        raw.display = True
        text = self.query_one("#entry-raw-text", Static)
        text.update(raw_json(entry) if not raw.collapsed else Content(""))
        self.query_one("#entry-scroll", VerticalScroll).scroll_home(animate=False)

    @on(Collapsible.Expanded, "#entry-raw")
    def _raw_expanded(self, event: Collapsible.Expanded) -> None:
        event.stop()
        if self._entry is not None:
            self.query_one("#entry-raw-text", Static).update(raw_json(self._entry))

    # ------------------------------------------------------------------ context tab

    def _view_for(self, entry_id: str) -> ContextView:
        view = self._views.get(entry_id)
        if view is not None:
            self._views.move_to_end(entry_id)
            return view
        view = build_context_view(
            self.store,
            entry_id,
            agent=getattr(self.app, "agent", None),
            model_name=self.model_name,
            window=self.context_window,
        )
        self._views[entry_id] = view
        while len(self._views) > CACHE_SIZE:
            self._views.popitem(last=False)
        return view

    def _refresh_context(self) -> None:
        rows = self.query_one("#context-rows", OptionList)
        head = self.query_one("#context-head", Static)
        system = self.query_one("#context-system", Collapsible)
        entry_id = self.entry_id
        if entry_id is None or entry_id not in self.store:
            self._context_view = None
            head.update(Content("Nothing selected." if entry_id is None else "Entry not found."))
            system.display = False
            rows.clear_options()
            return
        view = self._context_view = self._view_for(entry_id)
        self._start_count(view)
        head.update(self._context_head(view))
        self._fill_system(view)
        self._fill_rows(view)

    def _tiktoken_state(self, view: ContextView) -> Literal["…", "-"] | None:
        if not self.tiktoken_enabled or view.entry_id in self._count_errors:
            return "-"
        if view.entry_id not in self._counts:
            return "…"
        return None

    def _context_head(self, view: ContextView) -> Content:
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
            used, (f"  ({how}) · {messages} messages · ", _KEY), Content(strip_escapes(model))
        )
        counts = self._counts.get(view.entry_id)
        if not self.tiktoken_enabled:
            tiktoken: Content = Content.styled("tiktoken off", _KEY)
        elif view.entry_id in self._count_errors:
            tiktoken = Content.styled("tiktoken unavailable", "$warning")
        elif counts is None:
            tiktoken = Content.styled("tiktoken counting…", _KEY)
        else:
            tiktoken = Content.assemble(
                ("tiktoken ", _KEY), (f"{counts[0]:,}", "bold"), (f" ({counts[2]})", _KEY)
            )
        second = Content.assemble(
            ("chars/4 ", _KEY), (f"{view.estimate:,}", "bold"), (" · ", _KEY), tiktoken
        )
        if view.projection.compaction_id:
            second = second + Content.styled(
                f" · compacted at {view.projection.compaction_id}", _KEY
            )
        return _join([first, second])

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
        system.title = _literal_title(title)
        key = (tuple(view.sections), tuple(names))
        if key == self._system_key:
            return
        self._system_key = key
        scroll = self.query_one("#context-system-scroll", VerticalScroll)
        children: list[Widget] = []
        for section, text in view.sections:
            children.append(
                Collapsible(
                    Static(plain(text), markup=False),
                    title=_literal_title(f"{section} · {tokens_of(text):,} tokens"),
                    classes="-section",
                )
            )
        tool_lines = [_heading(f"tools ({len(names)})")]
        tool_lines += [_tool_line(t) for t in tools if isinstance(t, dict)]
        children.append(Static(_join(tool_lines), classes="-tools", markup=False))
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
            options.append(Option(Content.styled("(no messages)", _KEY), disabled=True))
        rows.set_options(options)

    @staticmethod
    def _row_tiktoken(
        row: ContextRow,
        counts: tuple[int, list[int], str] | None,
        state: Literal["…", "-"] | None,
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
        view = self._context_view
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
            self.post_message(self.JumpTo(self, row.entry_id))

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
    def _counted(self, event: DetailsPane._Counted) -> None:
        event.stop()
        self._counting.discard(event.entry_id)
        if event.result is not None:
            self._counts[event.entry_id] = event.result
            while len(self._counts) > 4 * CACHE_SIZE:
                self._counts.popitem(last=False)
        else:
            self._count_errors[event.entry_id] = event.error or "unavailable"
        view = self._context_view
        if view is not None and view.entry_id == event.entry_id and self.is_mounted:
            self.query_one("#context-head", Static).update(self._context_head(view))
            self._update_row_counts(view)

    # ------------------------------------------------------------------ compaction tab

    def _set_compaction_visible(self, visible: bool) -> None:
        for selector in (
            "#compaction-facts",
            "#jump-first-kept",
            "#compaction-files",
            "#compaction-summary-title",
            "#compaction-summary",
        ):
            self.query_one(selector).display = visible

    def _refresh_compaction(self) -> None:
        head = self.query_one("#compaction-head", Static)
        entry_id = self.entry_id
        view: CompactionView | None = None
        if entry_id is not None and entry_id in self.store:
            view = build_compaction_view(self.store, entry_id)
        self._compaction = view
        self.refresh_bindings()
        if view is None:
            if entry_id is None:
                text = "Nothing selected."
            elif entry_id not in self.store:
                text = f"Entry not found: {entry_id}"
            else:
                text = f"No compaction on the path to {entry_id}."
            head.update(Content(text))
            self._set_compaction_visible(False)
            return
        where = "this entry" if view.is_entry else f"the latest on the path to {entry_id}"
        head.update(
            Content.assemble(_heading(f"Compaction {view.compaction_id}"), (f" · {where}", _KEY))
        )
        self.query_one("#compaction-facts", Static).update(compaction_facts(view))
        self.query_one("#compaction-files", Static).update(compaction_files(view.entry))
        button = self.query_one("#jump-first-kept", Button)
        button.disabled = not view.first_kept or view.first_kept_text is None
        summary = view.entry.get("summary")
        self.query_one("#compaction-summary", Markdown).update(
            strip_escapes(summary) if isinstance(summary, str) else "*(no summary)*"
        )
        self._set_compaction_visible(True)
        self.query_one("#compaction-scroll", VerticalScroll).scroll_home(animate=False)

    @on(Button.Pressed, "#jump-first-kept")
    def _jump_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.jump_to_first_kept()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "jump_first_kept":
            return self.active_tab == "compaction" and self._compaction is not None
        return True

    def action_jump_first_kept(self) -> None:
        self.jump_to_first_kept()
