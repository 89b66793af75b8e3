"""Token estimators behind one interface: ``chars4`` (pi 1.6's exact rules, the default for
compaction decisions, so cut points and ``tokensBefore`` match pi) and ``tiktoken`` (real tokens,
loaded lazily; see :mod:`pitui.compaction.tiktoken_count`)."""

from __future__ import annotations

from typing import Any, Protocol

from pitui.compaction.tokens import estimate_tokens

ESTIMATORS = ("chars4", "tiktoken")


class Estimator(Protocol):
    name: str

    def count(self, message: dict[str, Any]) -> int:
        """Tokens of one projected message (a system message counts its sections and tools)."""
        ...


class Chars4:
    """``ceil(chars / 4)`` with JavaScript string lengths, as pi estimates."""

    name = "chars4"

    def count(self, message: dict[str, Any]) -> int:
        return estimate_tokens(message)


CHARS4 = Chars4()


class Remembered:
    """Another estimator's counts, kept per message object: a compaction plan counts each
    projected message several times (the context estimate, the cut point, the per-message
    list), which on a 100k-entry branch was most of ``pitui compact --dry-run``. For one
    computation over messages that do not change while it runs."""

    def __init__(self, inner: Estimator) -> None:
        self.inner = inner
        self.name = inner.name
        self._counts: dict[int, tuple[dict[str, Any], int]] = {}

    def count(self, message: dict[str, Any]) -> int:
        known = self._counts.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        tokens = self.inner.count(message)
        self._counts[id(message)] = (message, tokens)  # the message kept: its id stays its own
        return tokens


def remembered(estimator: Estimator) -> Estimator:
    """``estimator`` with its counts kept (see :class:`Remembered`)."""
    return estimator if isinstance(estimator, Remembered) else Remembered(estimator)


def get_estimator(name: str | None, model: str | None = None) -> Estimator:
    """``chars4`` (default) or ``tiktoken`` (o200k_base for OpenAI-family models, else cl100k)."""
    if name in (None, "", "chars4"):
        return CHARS4
    if name == "tiktoken":
        from pitui.compaction.tiktoken_count import TiktokenEstimator

        return TiktokenEstimator.for_model(model)
    raise ValueError(f"Unknown estimator {name!r}: use chars4 or tiktoken.")
