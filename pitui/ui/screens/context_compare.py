""" "Compare with…" for the Context tab: pick another node, see what changed in the model's
context between the two (the same diff as ``pitui context --leaf A --diff B``).

:class:`CompareTargetScreen` lists the useful other ends for entry A (the leaf, each request on
A's path, the compactions, the other branches' tips) with a filter (words or an id prefix);
:class:`ContextDiffScreen` shows the diff (``s`` swaps the two ends).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from pitui.compaction.context_diff import describe_diff, diff_contexts
from pitui.session.oneline import entry_text
from pitui.session.store import SessionStore
from pitui.text import one_line, strip_escapes
from pitui.ui.app_state import UsesApp
from pitui.ui.snapshot import resolve_entry_id

if TYPE_CHECKING:
    from pitui.ui.app import PituiApp

MAX_CANDIDATES = 400


def compare_candidates(store: SessionStore, entry_id: str) -> list[tuple[str, str]]:
    """(entry id, description) of the nodes worth comparing ``entry_id`` with, best first."""
    out: list[tuple[str, str]] = []
    seen = {entry_id}

    def add(node_id: str | None, why: str) -> None:
        if node_id is None or node_id in seen or len(out) >= MAX_CANDIDATES:
            return
        seen.add(node_id)
        text = entry_text(store.get(node_id))
        out.append((node_id, one_line(f"{why}: {text}", 160)))

    add(store.leaf_id, "the leaf")
    path = store.path_to(entry_id)
    for node in reversed(path[:-1]):
        if node.type == "message" and node.role == "assistant":
            add(node.id, "earlier request")
        elif node.type in ("compaction", "branch_summary"):
            add(node.id, node.type.replace("_", " "))
    for node in store.nodes():
        if node.type == "compaction":
            add(node.id, "compaction")
    for node in store.nodes():
        if not store.children(node.id):
            add(node.id, "branch tip")
    return out


class CompareTargetScreen(UsesApp, ModalScreen[str | None]):
    """Pick the other end of the comparison; dismisses with its entry id."""

    DEFAULT_CSS: ClassVar[str] = """
    CompareTargetScreen { align: center middle; }
    CompareTargetScreen > Vertical {
        width: 90%; height: 80%; border: round $primary; background: $surface;
    }
    CompareTargetScreen OptionList { height: 1fr; border: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]

    def __init__(self, store: SessionStore, entry_id: str) -> None:
        super().__init__()
        self.entry_id = entry_id
        self.candidates = compare_candidates(store, entry_id)

    def compose(self) -> ComposeResult:
        box = Vertical()
        box.border_title = (
            f"Compare the context at {self.entry_id} with… (Enter picks, Esc cancels)"
        )
        with box:
            yield Input(placeholder="filter: words, or an entry id", id="compare-filter")
            yield OptionList(*self._options(""), id="compare-options", markup=False)

    def _options(self, query: str) -> list[Option]:
        words = query.lower().split()
        return [
            Option(Content(f"{entry_id}  {text}"), id=entry_id)
            for entry_id, text in self.candidates
            if all(w in f"{entry_id} {text}".lower() for w in words)
        ]

    @on(Input.Changed, "#compare-filter")
    def _filter(self, event: Input.Changed) -> None:
        options = self.query_one("#compare-options", OptionList)
        options.clear_options()
        options.add_options(self._options(event.value))
        if options.option_count:
            options.highlighted = 0

    @on(Input.Submitted, "#compare-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        options = self.query_one("#compare-options", OptionList)
        if options.option_count:
            index = options.highlighted if options.highlighted is not None else 0
            self.dismiss(options.get_option_at_index(index).id)
            return
        found = resolve_entry_id(self.pitui.store, event.value.strip())
        if found is None:
            self.notify("No single entry matches; type more of its id.", severity="warning")
            return
        self.dismiss(found)

    def action_move(self, step: int) -> None:
        options = self.query_one("#compare-options", OptionList)
        if step > 0:
            options.action_cursor_down()
        else:
            options.action_cursor_up()

    @on(OptionList.OptionSelected, "#compare-options")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)


class ContextDiffScreen(UsesApp, ModalScreen[None]):
    """What changed in the model's context from ``before_id`` to ``after_id``."""

    DEFAULT_CSS: ClassVar[str] = """
    ContextDiffScreen { align: center middle; }
    ContextDiffScreen > VerticalScroll {
        width: 95%; height: 90%; border: round $primary; padding: 0 1; background: $surface;
    }
    ContextDiffScreen #diff-text { width: auto; text-wrap: nowrap; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("s", "swap", "Swap the two ends"),
    ]

    def __init__(self, before_id: str | None, after_id: str | None) -> None:
        super().__init__()
        self.before_id = before_id
        self.after_id = after_id

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll(id="diff-scroll")
        scroll.border_title = "Context diff (s swaps, Esc closes)"
        with scroll:
            yield Static(Content(self.diff_text()), id="diff-text", markup=False)

    def diff_text(self) -> str:
        # Two projections (cached per leaf by the store): milliseconds even on big sessions.
        diff = diff_contexts(self.pitui.store, self.before_id, self.after_id)
        return strip_escapes("\n".join(describe_diff(diff)))

    def action_swap(self) -> None:
        self.before_id, self.after_id = self.after_id, self.before_id
        self.query_one("#diff-text", Static).update(Content(self.diff_text()))

    def action_close(self) -> None:
        self.dismiss(None)


def compare_from(screen: Screen[Any], entry_id: str | None) -> None:
    """Start "compare with…" for ``entry_id`` from any screen of the app."""
    app = cast("PituiApp", screen.app)
    if entry_id is None:
        app.notify("Highlight an entry first.", severity="warning")
        return

    def picked(other: str | None) -> None:
        if other is not None:
            app.push_screen(ContextDiffScreen(entry_id, other))

    app.push_screen(CompareTargetScreen(app.store, entry_id), picked)
