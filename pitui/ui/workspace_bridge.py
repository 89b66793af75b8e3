"""Connecting an agent's workspace to the app: ``ask`` mode's dialog, and checkpoint notes.

One call, :func:`attach_workspace`, whenever the app gets an agent (start, session switch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pitui.agent.events import AgentEvent, CheckpointNote

if TYPE_CHECKING:
    from textual.app import App

    from pitui.agent.approval import Answer, ApprovalRequest, Asker
    from pitui.agent.session import AgentSession


def attach_workspace(app: App[int], agent: AgentSession | None) -> Callable[[], None]:
    """Let ``agent``'s approval questions open :class:`ApprovalPrompt` in ``app``, and show
    checkpoint notes (checkpoints off, a failed capture) as notices. Returns a function
    that undoes it."""
    if agent is None or agent.workspace is None:
        return lambda: None
    workspace = agent.workspace
    workspace.set_asker(_asker(app))

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, CheckpointNote):
            say = getattr(app, "say", None)  # PituiApp: in the transcript, where it stays
            if event.progress:  # transient ("waiting for the first checkpoint"): a toast
                app.notify(event.message, markup=False, timeout=8)
            elif callable(say):
                say(event.message, "warning")
            else:
                app.notify(event.message, severity="warning", markup=False, timeout=8)

    unsubscribe = agent.subscribe(on_event)

    def detach() -> None:
        unsubscribe()
        workspace.set_asker(None)

    return detach


def _asker(app: App[int]) -> Asker:
    """The dialog's asker, its module imported at the first question (after the first frame,
    :mod:`pitui.ui.after_first_frame` has imported it already)."""

    async def ask(request: ApprovalRequest) -> Answer:
        from pitui.ui.screens.approval_prompt import asker_for

        return await asker_for(app)(request)

    return ask
