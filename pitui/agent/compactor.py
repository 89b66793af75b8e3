"""Running compactions: the threshold check, manual ``/compact``, overflow recovery.

Planning is pure (:mod:`pitui.compaction`); this module asks the model for the summary, runs
the extension hooks and appends the ``compaction`` entry. Nothing is appended unless the whole
compaction succeeded, so cancelling it (Esc) leaves the session as it was.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pitui.agent.events import CompactionEnd, CompactionStart
from pitui.compaction.estimator import Estimator, get_estimator
from pitui.compaction.prepare import (
    ALREADY_COMPACTED,
    CompactionPreparation,
    prepare_compaction,
    projected_context_tokens,
)
from pitui.compaction.settings import (
    CompactionSettings,
    SettingsError,
    resolve_settings,
    should_compact,
)
from pitui.errors import UserError
from pitui.llm.keys import key_variable

if TYPE_CHECKING:
    from pitui.agent.extensions import Summary
    from pitui.agent.session import AgentSession
    from pitui.agent.summarize import Summarizer


class CompactionFailed(UserError):
    """A compaction did not happen; the message is one sentence."""

    def __init__(self, message: str, cancelled: bool = False) -> None:
        super().__init__(message)
        self.cancelled = cancelled


@dataclass(frozen=True)
class CompactionResult:
    entry_id: str
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    from_hook: bool


class Compactor:
    """Compaction for one agent session (its model, settings, extensions and store)."""

    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent

    # ------------------------------------------------------------------ settings and state

    @property
    def context_window(self) -> int | None:
        info = self.agent.model_info
        return info.context_window if info is not None else None

    def settings(self) -> CompactionSettings:
        """``compaction`` settings for the current model, clamped for small windows."""
        ref = self.agent.model_ref
        try:
            base = resolve_settings(
                self.agent.settings.compaction.section(), ref.litellm_name if ref else None
            )
        except SettingsError as exc:
            raise CompactionFailed(str(exc)) from None
        return base.for_window(self.context_window)

    def enabled(self) -> bool:
        """Automatic compaction is on (``compaction.enabled``; manual ``/compact`` always runs)."""
        return self.agent.settings.compaction.enabled

    def estimator(self) -> Estimator:
        ref = self.agent.model_ref
        name = self.agent.settings.compaction.estimator
        return get_estimator(name, str(ref) if ref else None)

    def context_tokens(self) -> int:
        store = self.agent.store
        return int(projected_context_tokens(store, store.project(), self.estimator())["tokens"])

    def over_threshold(self) -> bool:
        try:
            settings = self.settings()
        except CompactionFailed:
            return False
        return should_compact(self.context_tokens(), self.context_window, settings)

    # ------------------------------------------------------------------ running

    def summarizer(self) -> Summarizer:
        # Imported here: the model call it makes (pitui.llm.stream) is not on the path to
        # the first frame (imported after it, in a thread: pitui.ui.screens.main).
        from pitui.agent.summarize import Summarizer

        agent = self.agent
        info = agent.model_info
        if info is None:
            raise CompactionFailed("No model is configured to write the summary.")
        ref = agent.model_ref
        return Summarizer(
            info,
            agent.call_options(cache=False),  # pi sends summaries without cache breakpoints
            agent.route,
            key_variable(ref) if ref is not None else None,
            retry=agent.retry,
        )

    async def compact(
        self, reason: str, instructions: str | None = None, will_retry: bool = False
    ) -> CompactionResult:
        """Summarize and append a compaction; :class:`CompactionFailed` when it cannot."""
        agent = self.agent
        agent.emit(CompactionStart(reason))
        try:
            result = await self._compact(reason, instructions, will_retry)
        except asyncio.CancelledError:
            agent.emit(CompactionEnd(reason, cancelled=True))
            raise
        except CompactionFailed as exc:
            agent.emit(CompactionEnd(reason, error=str(exc), cancelled=exc.cancelled))
            if agent.extensions is not None:
                await agent.extensions.run_compact_failed(reason, str(exc))
            raise
        agent.emit(
            CompactionEnd(
                reason,
                entry_id=result.entry_id,
                tokens_before=result.tokens_before,
                will_retry=will_retry,
            )
        )
        return result

    async def _compact(
        self, reason: str, instructions: str | None, will_retry: bool
    ) -> CompactionResult:
        agent = self.agent
        plan = prepare_compaction(agent.store, None, self.settings(), self.estimator())
        if isinstance(plan, str):
            if plan == ALREADY_COMPACTED:
                raise CompactionFailed("Already compacted: nothing happened since the last one.")
            raise CompactionFailed("Nothing to compact: the session is too small.")
        if agent.extensions is not None:
            from pitui.agent.extensions import Cancel, Summary

            hook = await agent.extensions.run_before_compact(plan, reason, will_retry)
            if isinstance(hook, Cancel):
                raise CompactionFailed("An extension cancelled the compaction.", cancelled=True)
            if isinstance(hook, Summary):
                return self._append_from_hook(plan, hook)
        if agent.problem() is not None:
            raise CompactionFailed(str(agent.problem()))
        from pitui.agent.summarize import SummaryError

        try:
            summary = await self.summarizer().compaction_summary(plan, instructions)
        except SummaryError as exc:
            raise CompactionFailed(str(exc)) from None
        read_files, modified_files = plan.file_ops.lists()
        entry_id = agent.store.append_compaction(
            summary.text,
            plan.first_kept_entry_id,
            plan.tokens_before,
            details={"readFiles": read_files, "modifiedFiles": modified_files},
            from_hook=False,
            usage=summary.usage,
        )
        return CompactionResult(
            entry_id, summary.text, plan.first_kept_entry_id, plan.tokens_before, False
        )

    def _append_from_hook(self, plan: CompactionPreparation, hook: Summary) -> CompactionResult:
        first_kept = hook.first_kept_entry_id or plan.first_kept_entry_id
        tokens = hook.tokens_before
        tokens_before = tokens if isinstance(tokens, int) else plan.tokens_before
        details = hook.details
        if details is None:
            read_files, modified_files = plan.file_ops.lists()
            details = {"readFiles": read_files, "modifiedFiles": modified_files}
        summary = str(hook.summary)
        entry_id = self.agent.store.append_compaction(
            summary, first_kept, tokens_before, details=details, from_hook=True
        )
        return CompactionResult(entry_id, summary, first_kept, tokens_before, True)
