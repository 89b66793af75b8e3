"""Where each key goes: in the order the keys came, and never into a dialog the user did not see.

Two rules, applied by :class:`KeyRouter` to every key the terminal sends, before Textual
dispatches it (:meth:`pitui.ui.app.PituiApp.on_event`):

1. **Order.** Textual runs a priority binding the moment the app reads its key, but hands the
   other keys to the focused widget's queue: a binding could act before the text typed just
   before it had been inserted. Each key now waits until the focused widget has handled the keys
   before it (bounded by :data:`CATCH_UP_LIMIT`, so a stuck widget never stops the keyboard).

2. **Type-ahead.** A dialog that answers with single keys (:class:`AnswersByKey`: approvals,
   the read-only view's fork/clone, the restore question, ...) can open while the user is
   typing: the keys that arrived before it showed, and the rest of the burst after it (until a
   pause of :data:`TYPING_PAUSE`), go to the editor that was being typed into, never to the
   dialog. The dialog answers once the user has paused and pressed a key deliberately.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import weakref
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.widget import Widget
from textual.widgets import Input, TextArea

from pitui.ui.textual_patches.keys import forward_event

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

TYPING_PAUSE = 0.5
"""Seconds without a key that end a typing burst."""
TYPING_KEYS = frozenset({"enter", "backspace", "delete", "space", "tab"})
"""Keys that are part of typing besides the printable ones."""
CATCH_UP_LIMIT = 0.5
"""Longest wait (seconds) for the focused widget to handle the keys before a new one."""


class AnswersByKey:
    """Mixin for a modal screen answered with single keys: it never takes type-ahead."""

    answers_by_key: ClassVar[bool] = True


def answers_by_key(screen: object) -> bool:
    return bool(getattr(screen, "answers_by_key", False))


class KeyRouter:
    """Per app: orders keys behind the focused widget's queue and keeps type-ahead out of
    dialogs (see the module doc)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._editor: weakref.ref[Widget] | None = None
        self._last_typed = -math.inf  # event time of the last key that went to an editor
        self._shown_at: weakref.WeakKeyDictionary[Screen[Any], float] = weakref.WeakKeyDictionary()

    def start(self) -> None:
        """Follow the screens (the app is running)."""
        app = self.app
        # At once, on the push: keys already waiting in the app's queue come after it.
        app.screen_change_signal.subscribe(app, self._screen_changed, immediate=True)

    # ------------------------------------------------------------------ dialogs

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """A dialog answered by key is on top: note when its first frame is shown (the screen
        publishes its layout signal right after a layout's frame went to the terminal)."""
        if answers_by_key(screen) and screen not in self._shown_at:
            self._shown_at[screen] = math.inf  # not shown yet

            def shown(_screen: Screen[Any]) -> None:
                if self._shown_at.get(screen) == math.inf:
                    self._shown_at[screen] = time.monotonic()

            screen.screen_layout_refresh_signal.subscribe(self.app, shown, immediate=True)

    def shown(self, screen: Screen[Any]) -> bool:
        """``screen``'s first frame is on the terminal (always True for other screens)."""
        return self._shown_at.get(screen, -math.inf) < math.inf

    def held_back(self, event: events.Key) -> tuple[bool, Widget | None]:
        """(``event`` is kept from the dialog on top, the editor it goes to instead: None when
        there is none, and the key is dropped)."""
        screen = self.app.screen
        if not answers_by_key(screen):
            return False, None
        shown_at = self._shown_at.get(screen, -math.inf)
        before = event.time < shown_at
        if not before and event.time - self._last_typed >= TYPING_PAUSE:
            return False, None  # a deliberate key: the dialog takes it
        editor = self._editor() if self._editor is not None else None
        if editor is None or not editor.is_attached or editor.screen is screen:
            # Nothing was being typed into: a key sent before the dialog showed answers
            # nothing; one that follows a key the dialog took belongs to it.
            return before, None
        return True, editor

    # ------------------------------------------------------------------ every key

    async def catch_up(self) -> None:
        """Wait until the focused widget has handled what it was given before this key."""
        focused = self.app.focused
        if focused is None or not focused.is_attached:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def handled() -> None:
            if not done.done():
                done.set_result(None)

        if not focused.call_later(handled):
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(done, CATCH_UP_LIMIT)

    def delivered(self, event: events.Key, widget: Widget | None) -> None:
        """``event`` went to ``widget``: text typed into an editor keeps the burst going
        (moving the cursor, or a shortcut, does not); a key for anything else (a list, a
        dialog) ends it: the user is no longer typing."""
        if not (isinstance(widget, TextArea | Input) and not getattr(widget, "read_only", 0)):
            self._editor, self._last_typed = None, -math.inf
        elif event.is_printable or event.key in TYPING_KEYS:
            self._editor = weakref.ref(widget)
            self._last_typed = event.time

    async def route(self, event: events.Key) -> bool:
        """Order ``event`` behind the keys before it; True when it was delivered here (to the
        editor of a typing burst), False when Textual should dispatch it."""
        await self.catch_up()
        held, target = self.held_back(event)
        if not held:
            self.delivered(event, self.app.focused)
            return False
        if target is None:
            return True  # dropped: it came before the dialog showed
        self.delivered(event, target)
        # Textual's own way of handing an input event to a widget (the app does it for the
        # focused one): marked as forwarded, so the bubbling key is not taken as new input.
        forward_event(target, event)
        return True
