"""What a tab of the tree browser's details pane is (:class:`DetailsTab`), and the registry the
pane builds its tabs from (:class:`DetailsTabs`).

A tab shows the highlighted entry from one point of view (the entry itself, the context the
model would see there, the compaction in effect, the files). The pane knows nothing of any
tab: it makes one of each registered tab, in order, under its ``title``; ``set_tab(key)``
switches to one; it calls ``show(entry_id)`` on the visible tab when the highlighted entry
changed (``None``: nothing is highlighted, the tab shows that), again when a tab becomes
visible with an older entry, and ``forget()`` on every tab when what they cached may be
stale (a label was set, the model or the session changed). A tab that wants the tree's
cursor elsewhere posts :class:`DetailsTab.JumpRequested`.

A new tab is one module with a :class:`DetailsTab` subclass, and its registration in
:data:`pitui.ui.widgets.inspectors.TABS` (see docs/architecture.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from textual.message import Message
from textual.widget import Widget

from pitui.ui.app_state import UsesApp
from pitui.ui.widgets.inspector_views import ROW_CAP

_KEY = re.compile(r"[a-z][a-z0-9_-]*")


@dataclass(frozen=True)
class TabOptions:
    """What the pane was made with that a tab may read (the Context tab reads these)."""

    tiktoken: bool = True
    """Count the context with tiktoken too (in a thread)."""
    model_name: str | None = None
    """The model whose tokenizer and window are used (``None``: the agent's or the session's)."""
    context_window: int | None = None
    row_cap: int = ROW_CAP
    """Rows of a long list shown before "show more"."""


class DetailsTab(UsesApp, Widget):
    """One tab of the details pane. Subclasses set ``key`` and ``title`` and implement
    :meth:`show`; :meth:`forget` drops what they cache (nothing by default)."""

    key: ClassVar[str]
    """The tab's name: ``set_tab(key)``, ``/tree``'s initial tab, the ``tab-<key>`` pane id."""
    title: ClassVar[str]
    """The label on the tab bar."""

    class JumpRequested(Message):
        """Move the tree's cursor to ``entry_id`` (the pane posts ``DetailsPane.JumpTo``)."""

        def __init__(self, entry_id: str) -> None:
            super().__init__()
            self.entry_id = entry_id

    def __init__(self, options: TabOptions | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id or f"{self.key}-details")
        self.options = options or TabOptions()
        self.entry_id: str | None = None
        """The entry shown (``None``: nothing selected)."""

    def show(self, entry_id: str | None) -> None:
        """Show ``entry_id`` (``None``: nothing is highlighted; an id not in the store: say
        so). Called only while the tab is visible; may raise ``UserError`` or ``OSError`` when
        the session file changed underneath (the pane tries again later)."""
        raise NotImplementedError(f"{type(self).__name__} does not show entries")

    def forget(self) -> None:
        """Drop cached views (a label changed, the model or the session did); the pane shows
        the entry again afterwards."""


T = TypeVar("T", bound=DetailsTab)


class DetailsTabs:
    """The details pane's tabs, in the order they are shown, by ``key``."""

    def __init__(self, *tabs: type[DetailsTab]) -> None:
        self._tabs: dict[str, type[DetailsTab]] = {}
        for tab in tabs:
            self.register(tab)

    def register(self, tab: type[T]) -> type[T]:
        """Add ``tab`` after the others (usable as a class decorator)."""
        key = getattr(tab, "key", None)
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise ValueError(f"{tab.__name__}.key must be a lowercase name, not {key!r}.")
        if not isinstance(getattr(tab, "title", None), str):
            raise ValueError(f"{tab.__name__} needs a title.")
        if key in self._tabs:
            raise ValueError(f"Two details tabs are called {key!r}.")
        self._tabs[key] = tab
        return tab

    def copy(self) -> DetailsTabs:
        return DetailsTabs(*self._tabs.values())

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self._tabs)

    @property
    def first(self) -> str:
        return next(iter(self._tabs))

    def check(self, key: str) -> str:
        """``key`` if a tab has it, else ``ValueError`` naming the tabs."""
        if key not in self._tabs:
            raise ValueError(f"Unknown details tab {key!r}: use one of {', '.join(self._tabs)}.")
        return key

    def __contains__(self, key: object) -> bool:
        return key in self._tabs

    def __iter__(self) -> Iterator[type[DetailsTab]]:
        return iter(self._tabs.values())

    def __len__(self) -> int:
        return len(self._tabs)
