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


def get_estimator(name: str | None, model: str | None = None) -> Estimator:
    """``chars4`` (default) or ``tiktoken`` (o200k_base for OpenAI-family models, else cl100k)."""
    if name in (None, "", "chars4"):
        return CHARS4
    if name == "tiktoken":
        from pitui.compaction.tiktoken_count import TiktokenEstimator

        return TiktokenEstimator.for_model(model)
    raise ValueError(f"Unknown estimator {name!r}: use chars4 or tiktoken.")
