"""What the first frame does not need: kept off the path to it, imported just after it.

Every module imported before the TUI's first frame delays it (the interpreter imports at a
few MB/s of byte code, and a dataclass costs ~1 ms to define). The modules in
:data:`DEFERRED` are imported where they are first used, never at the top of a module the
first frame loads; :func:`warm_up` imports them in a thread once the frame is on screen, so
their first use (a compaction, a summary in the chat) does not import them on the event loop.
``tests/cli/test_headless_imports.py`` checks the TUI's own import log: none of these, nor
the provider layer, is imported before the first frame.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

DEFERRED: tuple[str, ...] = (
    "pitui.agent.summarize",  # compaction and branch summaries: the model call
    "textual.widgets.markdown",  # a compaction or branch summary in the chat
    "pitui.ui.screens.approval_prompt",  # ask mode's question (with the files it touches)
    "pitui.checkpoint.store",  # file checkpoints: opened as the first prompt is sent
    "pitui.checkpoint.record",
    "pitui.checkpoint.restore",  # moving the leaf restores files
    "pitui.checkpoint.diff",
)
"""Imported after the first frame (in this order)."""


def warm_up() -> None:
    """Render a small reply once (what the first reply needs, built ahead), then import
    :data:`DEFERRED`. Any thread; nothing here touches the app."""
    from pitui.ui.markdown_lines import warm_up as warm_up_markdown

    warm_up_markdown()
    for name in DEFERRED:
        try:
            __import__(name)  # the interpreter's import (-X importtime logs it)
        except Exception:  # imported again where it is used, which reports the error
            log.exception("importing %s after the first frame failed", name)
