"""The user's own shell commands: ``!command`` and ``!!command`` typed in the editor.

The command runs as the bash tool runs its commands (``bash -c`` in the session's folder, the
environment without credential variables, output streamed and kept as a head+tail window
with the full output saved to a file, key values redacted), without a timeout. It is stored as
pi stores it, a ``bashExecution`` message::

    {"role": "bashExecution", "command": "ls", "output": "a.py\\n", "exitCode": 0,
     "cancelled": false, "truncated": false, "timestamp": 1768470000000,
     "excludeFromContext": false}

``exitCode`` is left out for a command that was stopped (``cancelled``), and
``fullOutputPath`` is set when the output was cut. The model reads ``!command`` as a user
message ("Ran `ls`" and the output, :func:`pitui.session.shapes.bash_execution_text`);
``!!command`` (``excludeFromContext``) is shown but never sent.

While the agent runs, the command runs at once and its message waits for the run to end (as
in pi: a message between a tool call and its result would break the conversation). One
command runs at a time; :meth:`UserCommands.stop` stops it (Esc).

The approval mode applies: in ``read-only`` only commands known to only read run (the rest is
refused with a sentence saying why); in ``ask`` typing the command and pressing Enter is the
user's yes; in every mode a command that may change files is surrounded by file checkpoints
when the session has them, so the tree can go back to before it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pitui.agent.approval import read_only_command
from pitui.agent.events import UserCommandEnd, UserCommandStart
from pitui.agent.tool_output import ToolOutputStream
from pitui.agent.tools import ToolError, new_output_dir, run_command
from pitui.agent.tools.bash import CommandResult
from pitui.agent.tools.environment import Redactor, known_secrets, pass_env_names, tool_environment
from pitui.errors import UserError
from pitui.session.ids import now_ms
from pitui.text import strip_escapes

if TYPE_CHECKING:
    from pitui.agent.session import AgentSession

log = logging.getLogger(__name__)

_ids = itertools.count(1)


def parse_user_command(text: str) -> tuple[str, bool] | None:
    """``(command, excluded)`` for ``!command`` / ``!!command``; None for anything else (a
    lone ``!`` or ``!!`` is an ordinary prompt, as in pi)."""
    if not text.startswith("!"):
        return None
    excluded = text.startswith("!!")
    command = text[2:].strip() if excluded else text[1:].strip()
    return (command, excluded) if command else None


class UserCommandRefused(UserError):
    """The command was not run; the message is one sentence for the user."""


class UserCommands:
    """Runs the user's commands for one agent session (see the module doc)."""

    def __init__(self, agent: AgentSession) -> None:
        self.agent = agent
        self._task: asyncio.Task[Any] | None = None
        self._output_dir: Path | None = None
        self._waiting: set[asyncio.Task[None]] = set()  # messages stored when the run ends

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def stop(self) -> bool:
        """Stop the running command (its output so far is kept); False: none runs."""
        if not self.running:
            return False
        assert self._task is not None
        self._task.cancel()
        return True

    def refusal(self, command: str) -> str | None:
        """Why ``command`` may not run now (one sentence), or None."""
        if self.running:
            return "A command is already running: wait for it, or press Esc to stop it."
        workspace = self.agent.workspace
        mode = workspace.approvals.mode if workspace is not None else "auto"
        if mode == "read-only" and read_only_command(command) is None:
            return (
                "Not run: the approval mode is read-only, so only commands that just read "
                "(ls, cat, grep, git status, git log…, without redirections) run. Start pitui "
                "with --approve ask or --approve auto to run it."
            )
        return None

    async def run(self, command: str, *, excluded: bool = False) -> dict[str, Any]:
        """Run ``command``; returns its ``bashExecution`` message (stored now, or when the
        agent's run ends). Raises :class:`UserCommandRefused` when it may not run."""
        problem = self.refusal(command)
        if problem is not None:
            raise UserCommandRefused(problem)
        self._task = asyncio.ensure_future(self._run(command, excluded))
        return await asyncio.shield(self._task)

    async def _run(self, command: str, excluded: bool) -> dict[str, Any]:
        agent = self.agent
        call_id = f"user-command-{next(_ids)}"
        writes = read_only_command(command) is None
        if writes and not agent.running:
            await self._checkpoint("before-change")
        agent.emit(UserCommandStart(call_id, command, excluded))
        redactor = Redactor(known_secrets(os.environ))
        live = ToolOutputStream(call_id, redactor, agent.emit)
        partial: list[CommandResult] = []
        stopped = False
        if self._output_dir is None:
            self._output_dir = new_output_dir()
        try:
            result: CommandResult | None = await run_command(
                command,
                cwd=agent.cwd,
                output_dir=self._output_dir,
                timeout=None,
                on_output=live.feed,
                env=tool_environment(os.environ, pass_env_names(agent.settings)),
                on_cancel=partial.append,
                redactor=redactor,
            )
        except asyncio.CancelledError:
            stopped = True
            result = partial[0] if partial else None
        except ToolError as exc:
            live.close()
            agent.emit(UserCommandEnd(call_id, None, error=exc.message))
            raise UserCommandRefused(exc.message) from None
        finally:
            live.close()
        message = bash_execution_message(command, result, excluded, redactor, cancelled=stopped)
        if agent.running:
            agent.emit(UserCommandEnd(call_id, message))
            waiting = asyncio.ensure_future(self._store_after_run(call_id, message))
            self._waiting.add(waiting)
            waiting.add_done_callback(self._waiting.discard)
            return message
        entry_id = agent.store.append_message(message)
        agent.emit(UserCommandEnd(call_id, message, entry_id))
        if writes:
            await self._checkpoint("after-run")
        return message

    async def _store_after_run(self, call_id: str, message: dict[str, Any]) -> None:
        """Store ``message`` once the agent is idle (checked again after every wake-up: a new
        run may have started in between)."""
        agent = self.agent
        while agent.running:
            await agent.wait_idle()
        entry_id = agent.store.append_message(message)
        agent.emit(UserCommandEnd(call_id, message, entry_id))

    async def _checkpoint(self, reason: str) -> None:
        workspace = self.agent.workspace
        if workspace is None:
            return
        try:
            await workspace.checkpoint(reason)
        except Exception:  # a command never fails because of a checkpoint
            log.exception("a checkpoint around a user command failed")


def bash_execution_message(
    command: str,
    result: CommandResult | None,
    excluded: bool,
    redactor: Redactor,
    *,
    cancelled: bool = False,
) -> dict[str, Any]:
    """pi's ``bashExecution`` message for a command's result (``cancelled``: it was stopped;
    ``result`` None: before it could say anything): escape sequences left out, key values
    redacted."""
    cancelled = cancelled or result is None
    output = redactor.text(strip_escapes(result.output)) if result is not None else ""
    message: dict[str, Any] = {"role": "bashExecution", "command": command, "output": output}
    if not cancelled and result is not None:
        message["exitCode"] = result.exit_code
    message["cancelled"] = cancelled
    message["truncated"] = bool(result and result.truncated)
    if result is not None and result.full_output_path is not None:
        message["fullOutputPath"] = str(result.full_output_path)
    message["timestamp"] = now_ms()
    message["excludeFromContext"] = excluded
    return message
