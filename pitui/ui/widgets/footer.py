"""``KeyFooter``: Textual's ``Footer`` that rebuilds its keys only when they change.

Textual's footer removes and mounts all of its key widgets again whenever the screen's
bindings are refreshed (each focus change, each time a kept screen is shown again), although
what it shows is usually the same; on the tree browser that was a noticeable part of opening it.
This one compares what it would show with what it shows and rebuilds only on a difference;
when only the keys' texts or states differ (the tree's Esc says "Clear search" while a search is
shown, "Close" otherwise) it updates the key widgets in place: a rebuild mounts and styles new
widgets, 0.1 s on a loaded machine with a big session, during which no key is read.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from pitui.ui.textual_patches.widgets import FooterKey, set_footer_key_enabled

KeySpec = tuple[str, str, str, str, bool, str]
"""What one key widget shows: key, key display, description, action, enabled, tooltip."""


class KeyFooter(Footer):
    """A ``Footer`` whose keys are rebuilt only when the bindings it shows change."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[object, ...] | None = None
        self._keys_known = False  # as Textual's footer: the screen's bindings have been shown

    def _wanted(self) -> tuple[object, ...]:
        """What :meth:`compose` would show (the shown bindings, their state, the palette key)."""
        app = self.app
        shown = tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                binding.group,
                enabled,
                tooltip,
            )
            for (_node, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (shown, self.show_command_palette, app.ENABLE_COMMAND_PALETTE, self.compact)

    def _key_specs(self) -> list[KeySpec] | None:
        """The keys :meth:`compose` makes, in order (one per action: the first binding of
        each); None when bindings are grouped (their widgets are laid out differently)."""
        app = self.app
        first: dict[str, KeySpec] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show:
                continue
            if binding.group is not None:
                return None
            first.setdefault(
                binding.action,
                (
                    binding.key,
                    app.get_key_display(binding),
                    binding.description,
                    binding.action,
                    enabled,
                    tooltip,
                ),
            )
        return list(first.values())

    def _update_in_place(self, wanted: tuple[object, ...]) -> bool:
        """Show ``wanted`` by updating the key widgets when only their texts or states
        changed (the same number of keys, the same palette key); False if not possible."""
        if self._shown is None or wanted[1:] != self._shown[1:]:
            return False
        specs = self._key_specs()
        children = list(self.children)
        if specs is None or not all(isinstance(child, FooterKey) for child in children):
            return False  # labels or groups: rebuilt
        keys = [
            child
            for child in children
            if isinstance(child, FooterKey) and not child.has_class("-command-palette")
        ]
        if len(specs) != len(keys):
            return False
        for widget, (key, display, description, action, enabled, tooltip) in zip(
            keys, specs, strict=True
        ):
            old_width = cell_len(widget.key_display) + cell_len(widget.description)
            widget.key = key
            widget.key_display = display
            widget.description = description
            widget.action = action
            set_footer_key_enabled(widget, enabled)
            widget.tooltip = tooltip or None
            new_width = cell_len(display) + cell_len(description)
            widget.refresh(layout=new_width != old_width)
        self._shown = wanted
        return True

    def compose(self) -> ComposeResult:
        self._shown = self._wanted() if self._keys_known else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        self._keys_known = True
        if self._shown is not None and self.is_attached and screen is self.screen:
            wanted = self._wanted()
            if wanted == self._shown or self._update_in_place(wanted):
                return  # the same keys, or the same widgets showing other texts
        super().bindings_changed(screen)
