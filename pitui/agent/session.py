"""``AgentSession``: the agent loop over a session store, and what is written when.

Written when: the user message when submitted; each assistant message when it ends (never per
token); each tool result when it completes; ``model_change`` / ``thinking_level_change`` when
the user changes them (and at the start of a run when the branch records something else); the
system prompt as a ``system`` message before the run's user message when it changed. Streaming
deltas are only events.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pitui.agent.compactor import CompactionFailed, CompactionResult, Compactor
from pitui.agent.events import (
    AgentEvent,
    MessageDelta,
    MessageEnd,
    MessageStart,
    ReplyTruncated,
    RetryScheduled,
    RunEnded,
    RunError,
    ToolEnd,
    ToolStart,
)
from pitui.agent.mentions import Prompt
from pitui.agent.navigation import NavigateResult, navigate
from pitui.agent.system_prompt import build_sections, system_patch
from pitui.agent.tool_output import ToolOutputStream
from pitui.agent.tools import (
    ToolContext,
    ToolResult,
    default_tools,
    execute,
    kill_running_commands,
    new_output_dir,
    redact_result,
)
from pitui.agent.tools.base import Tool
from pitui.agent.tools.environment import pass_env_names, tool_environment
from pitui.config.settings import Settings
from pitui.errors import UserError
from pitui.llm.errors import ErrorInfo, assistant_error_kind, classify
from pitui.llm.keys import KEYLESS, check_key, key_variable
from pitui.llm.local_models import served_context_window
from pitui.llm.models import (
    ModelInfo,
    ModelRef,
    default_model_name,
    model_info,
    model_settings,
)
from pitui.llm.reply import ReplyBuilder, StreamEvent, TextDelta, ThinkingDelta
from pitui.llm.routes import OLLAMA_PROVIDERS, Route, route
from pitui.llm.stream import CallOptions, stream_reply
from pitui.session.errors import SessionError
from pitui.session.ids import now_ms
from pitui.session.shapes import tool_calls
from pitui.session.store import SessionStore

if TYPE_CHECKING:
    from pitui.agent.extensions import Extensions
    from pitui.agent.user_command import UserCommands
    from pitui.agent.workspace import Workspace


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high")
CANCELLED_TOOL = "Cancelled by the user before it finished."


class AgentError(UserError):
    """A run cannot start or did not finish; the message is one sentence for the user."""

    def __init__(self, message: str, kind: str = "config") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class RunResult:
    """How a run ended: ``error`` is set when the model or provider failed."""

    aborted: bool = False
    error: ErrorInfo | None = None
    last_message: dict[str, Any] | None = None
    entry_ids: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.aborted and self.error is None


class AgentSession:
    """Runs the agent on one session store. One run at a time; others queue as steering."""

    def __init__(
        self,
        store: SessionStore,
        *,
        cwd: str | Path | None = None,
        model: str | None = None,
        api_base: str | None = None,
        thinking: str | None = None,
        settings: Settings | None = None,
        tools: list[Tool] | None = None,
        extensions: Extensions | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        self.store = store
        self.extensions = extensions
        # Checkpoints and approval modes (pitui.agent.workspace): the tools' guard, after_run.
        self.workspace = workspace
        self.compactor = Compactor(self)
        self._overflow_recovery_attempted = False
        self._invalid_arguments: dict[str, str] = {}
        self.settings = settings or Settings()
        self.cwd = Path(cwd or store.cwd or ".").resolve()
        self.tools = (
            tools if tools is not None else default_tools(self.settings.tools.read.line_numbers)
        )
        self.retry = self.settings.retry.policy()
        projection = store.project()
        recorded = projection.model
        recorded_name = (
            f"{recorded.get('provider')}/{recorded.get('modelId')}"
            if recorded and recorded.get("provider") and recorded.get("modelId")
            else None
        )
        self.model_name: str | None = (
            model or recorded_name or default_model_name(self.settings.default_model)
        )
        level = thinking or (
            projection.thinking_level
            if projection.messages
            else self.settings.default_thinking_level
        )
        self.thinking: str = level if level in THINKING_LEVELS else "off"
        # The API base belongs to a model: --api-base to the model it came with.
        self._given_api_base = (self.model_name, api_base) if api_base else None
        self._listeners: list[Callable[[AgentEvent], None]] = []
        self._queue: list[str | Prompt] = []
        self._task: asyncio.Task[RunResult] | None = None
        self._user_commands: UserCommands | None = None
        self._output_dir: Path | None = None
        if workspace is not None:
            workspace.attach(self)

    def work_in(self, cwd: str | Path) -> None:
        """Run the tools in ``cwd`` from now on (the session's own directory is gone and the
        user chose to continue here; the session file keeps its directory)."""
        self.cwd = Path(cwd).resolve()

    # ------------------------------------------------------------------ configuration

    @property
    def model_ref(self) -> ModelRef | None:
        return ModelRef.parse(self.model_name) if self.model_name else None

    @property
    def model_info(self) -> ModelInfo | None:
        ref = self.model_ref
        return model_info(ref, self.settings.models_section()) if ref else None

    def model_settings(self, name: str | None = None) -> dict[str, Any]:
        """The ``models[...]`` settings of ``name`` (default: the current model).

        Keys read here and by :func:`pitui.llm.models.model_info`: ``apiBase``, ``api``,
        ``numCtx``, ``contextWindow``, ``maxOutput``/``maxTokens``, ``reasoning``,
        ``inputCost``, ``outputCost``, ``cacheReadCost``, ``cacheWriteCost``.
        """
        name = name or self.model_name
        return model_settings(ModelRef.parse(name), self.settings.models_section()) if name else {}

    def api_base_for(self, name: str | None) -> str | None:
        """Where ``name`` is served: the ``--api-base`` given with it, else its ``apiBase``
        setting, else the provider's own endpoint (None). Never another model's."""
        if name is None:
            return None
        given = self._given_api_base
        if given is not None and given[0] is not None and self._same_model(given[0], name):
            return given[1]
        configured = self.model_settings(name).get("apiBase")
        return configured.strip() if isinstance(configured, str) and configured.strip() else None

    @staticmethod
    def _same_model(a: str, b: str) -> bool:
        return bool(set(ModelRef.parse(a).names) & set(ModelRef.parse(b).names))

    @property
    def api_base(self) -> str | None:
        return self.api_base_for(self.model_name)

    @property
    def route(self) -> Route | None:
        """How the current model is served: its ``api`` setting, else its provider's API;
        an Ollama model with a ``numCtx`` setting goes through litellm (Ollama's OpenAI
        endpoint takes no context size)."""
        info = self.model_info
        if info is None:
            return None
        api = self.model_settings().get("api")
        if api is None and self._num_ctx() and info.ref.for_litellm.provider in OLLAMA_PROVIDERS:
            api = "litellm"
        return route(info, self.api_base, api if isinstance(api, str) else None)

    def problem(self) -> str | None:
        """Why a request cannot be made now (one sentence), or None."""
        ref = self.model_ref
        if ref is None:
            return (
                "No model is configured: pass --model provider/name "
                "(for example anthropic/claude-sonnet-4-5) or set defaultModel in settings."
            )
        return check_key(ref, self.api_base).problem

    def model_warning(self) -> str | None:
        """A hint (not a refusal) when the model table does not know the model, e.g. a pi
        session recorded with a provider/model name nobody here serves."""
        info = self.model_info
        if info is None or info.known or self.api_base:
            return None
        if info.ref.provider in KEYLESS:
            return None
        return f"{info.ref} is not in the model table: choose a model with --model or /model."

    def set_model(self, name: str) -> None:
        """Switch model; recorded as a ``model_change`` entry (pi's provider names)."""
        ref = ModelRef.parse(name)
        if self._given_api_base is not None and self._given_api_base[0] is None:
            # pitui --api-base URL without a model: the first model chosen is served there.
            self._given_api_base = (ref.litellm_name, self._given_api_base[1])
        self.model_name = ref.litellm_name
        target = self.route
        assert target is not None
        self.store.append_model_change(target.provider, target.model_id)

    def set_thinking(self, level: str) -> None:
        """Change the thinking level; recorded only when it actually changes."""
        if level not in THINKING_LEVELS:
            raise AgentError(f"Unknown thinking level {level!r}: use {', '.join(THINKING_LEVELS)}.")
        if level != self.thinking or self.store.project().thinking_level != level:
            self.thinking = level
            self.store.append_thinking_level_change(level)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Callable[[AgentEvent], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    _emit = emit

    def call_options(self, *, cache: bool = True) -> CallOptions:
        ref = self.model_ref
        base = self.api_base
        key = check_key(ref, base).api_key if ref is not None else None
        settings = self.settings
        return CallOptions(
            api_base=base,
            api_key=key,
            thinking=self.thinking,
            cache=cache,
            num_ctx=self._num_ctx(),
            idle_timeout=settings.http_idle_timeout_ms / 1000,
            connect_timeout=settings.http_connect_timeout_ms / 1000,
        )

    def _num_ctx(self) -> int | None:
        """Ollama's context size, when the ``numCtx`` setting asks for one (pi sends none:
        Ollama then keeps its own default instead of allocating the whole window)."""
        value = self.model_settings().get("numCtx")
        return value if isinstance(value, int) and value > 0 else None

    async def _learn_context_window(self) -> None:
        """Ask a local Ollama server for the model's window once (when nothing set it): the
        gauge and compaction need it."""
        target, info = self.route, self.model_info
        if target is None or info is None or target.provider != "ollama" or info.context_window:
            return
        await served_context_window(info.ref, self.api_base)

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def wait_idle(self) -> None:
        """Wait until no run, compaction or navigation is under way (its end, not its result)."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    @property
    def user_commands(self) -> UserCommands:
        """The user's ``!command`` runs in this session (see :mod:`pitui.agent.user_command`)."""
        if self._user_commands is None:
            from pitui.agent.user_command import UserCommands

            self._user_commands = UserCommands(self)
        return self._user_commands

    def steer(self, text: str | Prompt) -> None:
        """Queue a message typed while the agent works; delivered after the current tool batch
        (a :class:`~pitui.agent.mentions.Prompt`: with the files it mentions)."""
        self._queue.append(text)

    def abort(self) -> None:
        """Stop the running reply and tools; the partial reply is stored as ``aborted``."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def stop(self, timeout: float = 0.8) -> bool:
        """Abort and wait (at most ``timeout`` seconds) until the run has stored what it had:
        the partial reply as ``aborted``, a cancelled result for a running tool. Commands that
        ignore SIGTERM get SIGKILL halfway. True when the run ended in time.

        The path every way of leaving pitui takes (Ctrl+Q, SIGTERM, SIGHUP, a closed terminal).
        """
        task = self._task
        if task is None or task.done():
            return True
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=timeout / 2)
        if not done:
            kill_running_commands()
            done, _ = await asyncio.wait({task}, timeout=timeout / 2)
        return bool(done)

    async def prompt(
        self, text: str | Prompt, images: list[dict[str, Any]] | None = None
    ) -> RunResult:
        """Run the agent on a new user message until the model stops (or fails, or is aborted).
        A :class:`~pitui.agent.mentions.Prompt` carries the files its ``@`` mentions name."""
        if self.running:
            self.steer(text)
            return RunResult()
        problem = self.problem()
        if problem is not None:
            self._emit(RunError("config", problem))
            raise AgentError(problem)
        self._task = asyncio.ensure_future(self._run(text, images))
        try:
            return await asyncio.shield(self._task)
        except asyncio.CancelledError:
            # Our caller was cancelled (Ctrl+C): stop the run and let it store what it had.
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            raise

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Manual compaction (works with auto-compaction off); Esc/``abort()`` cancels it."""
        if self.running:
            raise AgentError("The agent is busy: wait for it or press Esc first.")
        task = asyncio.ensure_future(self.compactor.compact("manual", instructions))
        self._task = task  # type: ignore[assignment]
        try:
            return await task
        except asyncio.CancelledError:
            raise CompactionFailed("Compaction cancelled.", cancelled=True) from None

    async def navigate(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> NavigateResult:
        """Move the leaf (tree navigation), optionally summarizing the branch left behind."""
        if self.running:
            raise AgentError("The agent is busy: wait for it or press Esc first.")
        task = asyncio.ensure_future(
            navigate(
                self,
                target_id,
                summarize=summarize,
                instructions=instructions,
                replace_instructions=replace_instructions,
                label=label,
            )
        )
        self._task = task  # type: ignore[assignment]
        try:
            return await task
        except asyncio.CancelledError:
            return NavigateResult(cancelled=True)

    async def _run(self, text: str | Prompt, images: list[dict[str, Any]] | None) -> RunResult:
        result = RunResult()
        self._overflow_recovery_attempted = False
        try:
            self._record_selection()
            await self._threshold_check()
            self._record_system_prompt()
            self._append_user(text, images, result)
            await self._loop(result)
        except asyncio.CancelledError:
            result.aborted = True
            await self._after_run()
            self._emit(RunEnded("aborted"))
            return result
        except SessionError as exc:
            # The disk is full, a permission changed, the session became read-only: the run
            # stops with one sentence; nothing half-written stays (the store guarantees it).
            result.error = ErrorInfo("storage", str(exc))
            self._emit(RunError("storage", str(exc)))
        await self._after_run()
        self._emit(RunEnded("error" if result.error else "done"))
        return result

    async def _after_run(self) -> None:
        """The workspace checkpoints what the run left (finishes even if Esc is pressed again)."""
        if self.workspace is not None:
            await asyncio.shield(self.workspace.after_run())

    def _record_selection(self) -> None:
        projection = self.store.project()
        target = self.route
        assert target is not None
        wanted = {"provider": target.provider, "modelId": target.model_id}
        if projection.model != wanted or not projection.messages:
            self.store.append_model_change(target.provider, target.model_id)
        if projection.thinking_level != self.thinking or not projection.messages:
            self.store.append_thinking_level_change(self.thinking)

    def _record_system_prompt(self) -> None:
        declarations = [tool.declaration() for tool in self.tools]
        sections = build_sections(self.cwd, declarations)
        current = self.store.project().system_message
        message = system_patch(current, sections, declarations)
        if message is not None:
            self.store.append_message(message)

    def _append_user(
        self, text: str | Prompt, images: list[dict[str, Any]] | None, result: RunResult
    ) -> None:
        prompt = text if isinstance(text, Prompt) else Prompt(text)
        fields = prompt.message_fields()
        fields["content"].extend(images or [])
        message = {"role": "user", **fields, "timestamp": now_ms()}
        self._emit(MessageStart("user"))
        entry_id = self.store.append_message(message)
        result.entry_ids.append(entry_id)
        self._emit(MessageEnd(entry_id, message))

    async def _loop(self, result: RunResult) -> None:
        while True:
            reply = await self._request(result)
            if reply is None:
                return
            calls = tool_calls(reply)
            if calls and reply.get("stopReason") == "toolUse":
                await self._run_tools(calls, result)
                self._deliver_queue(result)
                await self._threshold_check()
                continue
            if self._queue:
                self._deliver_queue(result)
                continue
            return

    def _deliver_queue(self, result: RunResult) -> None:
        while self._queue:
            self._append_user(self._queue.pop(0), None, result)

    async def _request(self, result: RunResult) -> dict[str, Any] | None:
        """One assistant reply, with retries for transient errors. None when the run must stop."""
        await self._learn_context_window()
        info, ref, target = self.model_info, self.model_ref, self.route
        assert info is not None and ref is not None and target is not None
        options = self.call_options()
        variable = key_variable(ref)
        retries = self.retry.start()
        while True:
            projection = self.store.project()
            builder = ReplyBuilder(info, target)
            self._emit(MessageStart("assistant"))
            try:
                await stream_reply(
                    info, projection.messages, projection.tools, options, builder, self._on_stream
                )
            except asyncio.CancelledError:
                self._store_reply(builder.message("aborted"), result)
                raise
            except Exception as exc:
                error = classify(exc, variable)
                failed_id = self._store_reply(builder.message("error", error.message), result)
                if error.kind == "overflow":
                    if await self._recover_overflow(failed_id, error, result):
                        continue
                    return None
                if error.kind == "retryable":
                    delay = retries.next_delay(error.retry_after)
                    if delay is not None:
                        # pi 1.6: the failed attempt is omitted so the retry does not resend it.
                        self.store.append_context_edit(failed_id, None)
                        self._emit(
                            RetryScheduled(
                                retries.attempt, self.retry.max_retries, delay, error.message
                            )
                        )
                        await asyncio.sleep(delay)
                        continue
                    if retries.gave_up:
                        error = ErrorInfo(
                            error.kind,
                            f"{error.message} (gave up after {self.retry.max_retries} retries)",
                            status=error.status,
                        )
                result.error = error
                self._emit(RunError(error.kind, error.message))
                return None
            message = builder.message()
            entry_id = self._store_reply(message, result)
            self._invalid_arguments = builder.invalid_arguments
            if self._is_length_overflow(message):
                error = ErrorInfo("overflow", "The reply stopped early: the context is full.")
                if await self._recover_overflow(entry_id, error, result):
                    continue
                return None
            if message["stopReason"] == "length":
                output = (message.get("usage") or {}).get("output", 0)
                self._emit(ReplyTruncated(int(output) if isinstance(output, int) else 0))
            elif message["stopReason"] == "error":
                # A refusal or a safety stop: stored as pi stores it, the run ends.
                error = ErrorInfo("refused", str(message.get("errorMessage") or "error"))
                result.error = error
                self._emit(RunError(error.kind, error.message))
                return None
            else:
                self._overflow_recovery_attempted = False
            if self._is_silent_overflow(message) and self.compactor.enabled():
                # The user already has this answer: compact without retrying.
                with contextlib.suppress(CompactionFailed):
                    await self.compactor.compact("overflow")
            return message

    # ------------------------------------------------------------------ compaction

    async def _threshold_check(self) -> None:
        """Compact when the context passes ``window - reserve`` (before a prompt, between turns)."""
        if not self.compactor.over_threshold():
            return
        with contextlib.suppress(CompactionFailed):
            await self.compactor.compact("threshold")

    def _is_length_overflow(self, message: dict[str, Any]) -> bool:
        """A ``length`` stop that is really a full context (pi 1.6's rule: nothing was
        produced and the input filled the window). An ordinary one hit the output limit."""
        if message.get("stopReason") != "length":
            return False
        return assistant_error_kind(message, self.compactor.context_window) == "overflow"

    def _is_silent_overflow(self, message: dict[str, Any]) -> bool:
        window = self.compactor.context_window
        return (
            message.get("stopReason") == "stop"
            and assistant_error_kind(message, window) == "overflow"
        )

    async def _recover_overflow(self, failed_id: str, error: ErrorInfo, result: RunResult) -> bool:
        """Hide the failed attempt, compact, and retry once (pi 1.6). False: stop the run."""
        advice = "reduce the input or switch to a model with a larger context window"
        if not self.compactor.enabled():
            # compaction.enabled false is a hard off switch (pi): no edit, no compaction.
            final = ErrorInfo(
                "overflow",
                "The context is full and automatic compaction is off (compaction.enabled is "
                "false): compact it yourself (/compact or pitui compact), turn compaction on, "
                "or continue from an earlier point of the tree.",
                status=error.status,
            )
        elif self._overflow_recovery_attempted:
            final = ErrorInfo(
                "overflow",
                f"The context is still too large after compacting once: {advice}.",
                status=error.status,
            )
        else:
            self._overflow_recovery_attempted = True
            self.store.append_context_edit(failed_id, None)
            try:
                await self.compactor.compact("overflow", will_retry=True)
                return True
            except CompactionFailed as exc:
                final = ErrorInfo(
                    "overflow",
                    f"The context overflowed and compacting it failed ({exc}): {advice}.",
                    status=error.status,
                )
        result.error = final
        self._emit(RunError(final.kind, final.message))
        return False

    # ------------------------------------------------------------------ storing

    def _store_reply(self, message: dict[str, Any], result: RunResult) -> str:
        entry_id = self.store.append_message(message)
        result.entry_ids.append(entry_id)
        result.last_message = message
        self._emit(MessageEnd(entry_id, message))
        return entry_id

    def _on_stream(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._emit(MessageDelta("text", event.text))
        elif isinstance(event, ThinkingDelta):
            self._emit(MessageDelta("thinking", event.text))

    # ------------------------------------------------------------------ tools

    def _context(self) -> ToolContext:
        if self._output_dir is None:
            self._output_dir = new_output_dir()  # created when an output is first saved
        guard = self.workspace.guard if self.workspace is not None else None
        env = tool_environment(os.environ, pass_env_names(self.settings))
        return ToolContext(cwd=self.cwd, output_dir=self._output_dir, env=env, guard=guard)

    async def _run_tools(self, calls: list[dict[str, Any]], result: RunResult) -> None:
        by_name = {tool.name: tool for tool in self.tools}
        invalid = self._invalid_arguments
        for call in calls:
            call_id, name = str(call.get("id")), str(call.get("name"))
            raw_arguments = call.get("arguments")
            arguments: dict[str, Any] = raw_arguments if isinstance(raw_arguments, dict) else {}
            self._emit(ToolStart(call_id, name, arguments))
            tool = by_name.get(name)
            if call_id in invalid:
                outcome = ToolResult(
                    [
                        {
                            "type": "text",
                            "text": f"Invalid JSON arguments for {name}: {invalid[call_id][:200]}",
                        }
                    ],
                    is_error=True,
                )
            elif tool is None:
                known = ", ".join(by_name) or "none"
                outcome = ToolResult(
                    [{"type": "text", "text": f"Tool {name} does not exist (tools: {known})."}],
                    is_error=True,
                )
            else:
                outcome = await self._run_tool(tool, call_id, name, arguments, result)
            self._store_tool_result(call_id, name, outcome, result)

    async def _run_tool(
        self,
        tool: Tool,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        result: RunResult,
    ) -> ToolResult:
        """Run one call; its output is shown live (:class:`ToolOutput`). When it is aborted,
        what it had (the output a command printed) is stored with the abort noted."""
        ctx = self._context()
        live = ToolOutputStream(call_id, ctx.redactor(), self._emit)
        ctx.on_output = live.feed
        try:
            return await execute(tool, arguments, ctx)
        except asyncio.CancelledError:
            live.close()
            if ctx.partial is not None:
                cancelled = redact_result(ctx.partial, ctx.redactor())
            else:
                cancelled = ToolResult([{"type": "text", "text": CANCELLED_TOOL}], True)
            self._store_tool_result(call_id, name, cancelled, result)
            raise
        finally:
            live.close()

    def _store_tool_result(
        self, call_id: str, name: str, outcome: ToolResult, result: RunResult
    ) -> None:
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": outcome.content,
        }
        if outcome.details is not None:
            message["details"] = outcome.details
        message["isError"] = outcome.is_error
        message["timestamp"] = now_ms()
        entry_id = self.store.append_message(message)
        result.entry_ids.append(entry_id)
        self._emit(ToolEnd(call_id, name, entry_id, outcome.is_error, message))
