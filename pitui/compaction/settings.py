"""Compaction settings, resolved per model as pi 1.6 does, plus our clamp for small windows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pitui.errors import UserError

DEFAULT_RESERVE = 16384
DEFAULT_KEEP = 20000


class SettingsError(UserError, ValueError):
    """An invalid compaction setting (one sentence naming it)."""


@dataclass(frozen=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE
    keep_recent_tokens: int = DEFAULT_KEEP
    explicit: frozenset[str] = field(default=frozenset(), compare=False)
    """Which token fields the user set (``reserveTokens``, ``keepRecentTokens``): the
    small-window clamp never changes those."""

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }

    def for_window(self, context_window: int | None) -> CompactionSettings:
        """Our fix for small local models (pi never compacts an 8k model with its defaults).

        A default reserve is at most a quarter of the window and a default kept tail at most
        half. Values the user set (in the settings, a model override or on the command line)
        are used as they are.
        """
        if not context_window or context_window <= 0:
            return self
        reserve, keep = self.reserve_tokens, self.keep_recent_tokens
        if "reserveTokens" not in self.explicit:
            reserve = min(reserve, context_window // 4)
        if "keepRecentTokens" not in self.explicit:
            keep = min(keep, context_window // 2)
        return CompactionSettings(self.enabled, reserve, keep, self.explicit)

    def with_values(
        self, reserve_tokens: int | None = None, keep_recent_tokens: int | None = None
    ) -> CompactionSettings:
        """These settings with explicitly given token values (e.g. from command-line options)."""
        explicit = set(self.explicit)
        reserve, keep = self.reserve_tokens, self.keep_recent_tokens
        if reserve_tokens is not None:
            reserve = reserve_tokens
            explicit.add("reserveTokens")
        if keep_recent_tokens is not None:
            keep = keep_recent_tokens
            explicit.add("keepRecentTokens")
        return CompactionSettings(self.enabled, reserve, keep, frozenset(explicit))


def _token_value(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise SettingsError(f"Invalid {where} setting: {value!r} (a number of tokens ≥ 0).")
    return int(value)


def resolve_settings(section: Any, model_key: str | None) -> CompactionSettings:
    """``compaction`` settings for ``provider/modelId``: each token field is looked up in
    ``modelOverrides[model_key]`` first, then the ordinary value, then the default."""
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise SettingsError("Invalid compaction setting: it must be an object.")
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise SettingsError(f"Invalid compaction.enabled setting: {enabled!r} (true or false).")
    overrides = section.get("modelOverrides") or {}
    if not isinstance(overrides, dict):
        raise SettingsError("Invalid compaction.modelOverrides setting: it must be an object.")
    override = overrides.get(model_key) if model_key else None
    if override is not None and not isinstance(override, dict):
        raise SettingsError(f'Invalid compaction.modelOverrides["{model_key}"]: not an object.')
    values: dict[str, int] = {}
    explicit: set[str] = set()
    for name, default in (("reserveTokens", DEFAULT_RESERVE), ("keepRecentTokens", DEFAULT_KEEP)):
        value = default
        if name in section:
            value = _token_value(section[name], f"compaction.{name}")
            explicit.add(name)
        if override is not None and name in override:
            value = _token_value(override[name], f'compaction.modelOverrides["{model_key}"].{name}')
            explicit.add(name)
        values[name] = value
    return CompactionSettings(
        enabled, values["reserveTokens"], values["keepRecentTokens"], frozenset(explicit)
    )


def should_compact(
    context_tokens: int, context_window: int | None, settings: CompactionSettings
) -> bool:
    """``contextTokens > contextWindow - reserveTokens`` (never for an unknown window)."""
    if not settings.enabled or not context_window or context_window <= 0:
        return False
    return context_tokens > context_window - settings.reserve_tokens
