"""Moving the leaf to another point of the tree, optionally summarizing the branch left behind.

Selecting a user (or custom) message moves the leaf to its parent and hands its text back for
the editor (edit and resubmit); selecting anything else moves the leaf onto it. With a summary,
a ``branch_summary`` entry is appended at the new position; its ``fromId`` is the old leaf (the
abandoned path), as pi 1.6 writes it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pitui.compaction.branch import collect_branch_entries, prepare_branch_entries
from pitui.errors import UserError
from pitui.session.shapes import message_text

if TYPE_CHECKING:
    from pitui.agent.extensions import BranchSummaryResult
    from pitui.agent.session import AgentSession
    from pitui.session.store import SessionStore

DEFAULT_WINDOW = 128000


class NavigationError(UserError):
    """Navigation could not happen; the message is one sentence."""


@dataclass
class NavigateResult:
    editor_text: str | None = None
    summary_entry_id: str | None = None
    cancelled: bool = False
    already_here: bool = False


def landing_point(store: SessionStore, target_id: str) -> tuple[str | None, str | None]:
    """(new leaf id, editor text) when ``target_id`` is selected: a user or custom message
    lands on its parent (edit and resubmit), anything else on itself."""
    node = store.node(target_id)
    data = store.data(node)
    parent_id = node.parent.id if node.parent is not None else None
    if node.type == "message" and node.role == "user":
        return parent_id, message_text(data.get("message"), "")
    if node.type == "custom_message":
        return parent_id, message_text({"content": data.get("content")}, "")
    return target_id, None


async def navigate(
    agent: AgentSession,
    target_id: str,
    *,
    summarize: bool = False,
    instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
) -> NavigateResult:
    store = agent.store
    if target_id == store.leaf_id:
        return NavigateResult(already_here=True)
    store.node(target_id)  # unknown ids raise EntryNotFoundError
    old_leaf = store.leaf_id
    branch = collect_branch_entries(store, old_leaf, target_id)
    hook: BranchSummaryResult | None = None
    if agent.extensions is not None:
        from pitui.agent.extensions import Cancel, TreePreparation

        answer = await agent.extensions.run_before_tree(
            TreePreparation(
                target_id=target_id,
                old_leaf_id=old_leaf,
                common_ancestor_id=branch.common_ancestor_id,
                entries_to_summarize=[n.id for n in branch.entries],
                user_wants_summary=summarize,
                custom_instructions=instructions,
            )
        )
        if isinstance(answer, Cancel):
            return NavigateResult(cancelled=True)
        hook = answer
    summary_text: str | None = None
    details: Any = None
    usage: dict[str, Any] | None = None
    from_hook = False
    if summarize and hook is not None:
        # An extension's summary is used whenever a summary was asked for (as pi does).
        summary_text, details, from_hook = str(hook.summary), hook.details, True
    elif summarize and branch.entries:
        if agent.problem() is not None:
            raise NavigationError(f"Cannot summarize the branch: {agent.problem()}")
        info = agent.model_info
        assert info is not None
        reserve = agent.settings.branch_summary.reserve_tokens
        budget = (info.context_window or DEFAULT_WINDOW) - reserve
        prep = prepare_branch_entries(store, branch.entries, budget)
        from pitui.agent.summarize import SummaryError  # not on the path to the first frame

        try:
            result = await agent.compactor.summarizer().branch_summary(
                prep, instructions, replace_instructions
            )
        except asyncio.CancelledError:
            return NavigateResult(cancelled=True)
        except SummaryError as exc:
            raise NavigationError(str(exc)) from None
        summary_text, usage = result.text, result.usage
        read_files, modified_files = prep.file_ops.lists()
        details = {"readFiles": read_files, "modifiedFiles": modified_files}
    new_leaf, editor_text = landing_point(store, target_id)
    outcome = NavigateResult(editor_text=editor_text)
    if summary_text is not None:
        outcome.summary_entry_id = store.branch_with_summary(
            new_leaf, summary_text, details=details, from_hook=from_hook, usage=usage
        )
        if label:
            store.append_label(outcome.summary_entry_id, label)
    else:
        if new_leaf is None:
            store.reset_leaf()
        else:
            store.branch(new_leaf)
        if label:
            store.append_label(target_id, label)
    return outcome
