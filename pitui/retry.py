"""Retrying a model request that failed for a passing reason (a rate limit, an overload, a 5xx
reply, a timeout, a cut stream): how often, and how long to wait before each new try.

:class:`RetryPolicy` is the rule (read from the ``retry`` settings by
``pitui.config.settings.RetrySettings.policy``); :class:`Retries` counts the tries of one
request. The agent's turn loop and the summary requests of compaction and branch summaries both
ask it, so they retry the same way. Whether an error is worth retrying is the provider layer's
call (``pitui.llm.errors.classify``); the waiting itself (``asyncio.sleep``) is the caller's.

Pure: stdlib only, so every layer may use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Up to ``max_retries`` new tries after the first, waiting ``base_delay`` seconds before
    the first retry and twice as long before each next one, at most ``max_delay``."""

    enabled: bool = True
    max_retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1 for the first). A server's
        ``retry-after`` is honoured: never waited less, and it may lengthen the wait past
        ``max_delay`` (waiting less would only be refused again)."""
        delay = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        if retry_after is not None:
            delay = min(max(delay, retry_after), max(self.max_delay, retry_after))
        return delay

    def start(self) -> Retries:
        """The count of one request's tries."""
        return Retries(self)


class Retries:
    """The retries of one request, counted as they are scheduled."""

    __slots__ = ("attempt", "policy")

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.attempt = 0
        """How many retries were asked for so far (the one just scheduled included)."""

    def next_delay(self, retry_after: float | None = None) -> float | None:
        """After a failure worth retrying: the seconds to wait before trying again, or None when
        no retry is left (retries are off, or ``max_retries`` were made)."""
        if not self.policy.enabled:
            return None
        self.attempt += 1
        if self.attempt > self.policy.max_retries:
            return None
        return self.policy.delay(self.attempt, retry_after)

    @property
    def gave_up(self) -> bool:
        """Whether retries were on and every one of them was used."""
        return self.policy.enabled and self.attempt > self.policy.max_retries
