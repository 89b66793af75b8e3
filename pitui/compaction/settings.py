"""Compaction settings, resolved per model as pi 1.6 does, plus our clamp for small windows."""

from __future__ import annotations

from dataclasses import dataclass
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

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }

    def for_window(self, context_window: int | None) -> CompactionSettings:
        """Our fix for small local models (pi never compacts an 8k model with its defaults).

        The effective reserve is at most a quarter of the window and the kept tail at most half.
        """
        if not context_window or context_window <= 0:
            return self
        return CompactionSettings(
            self.enabled,
            min(self.reserve_tokens, context_window // 4),
            min(self.keep_recent_tokens, context_window // 2),
        )


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
    for field, default in (("reserveTokens", DEFAULT_RESERVE), ("keepRecentTokens", DEFAULT_KEEP)):
        ordinary = (
            _token_value(section[field], f"compaction.{field}") if field in section else default
        )
        if override is not None and field in override:
            ordinary = _token_value(
                override[field], f'compaction.modelOverrides["{model_key}"].{field}'
            )
        values[field] = ordinary
    return CompactionSettings(enabled, values["reserveTokens"], values["keepRecentTokens"])


def should_compact(
    context_tokens: int, context_window: int | None, settings: CompactionSettings
) -> bool:
    """``contextTokens > contextWindow - reserveTokens`` (never for an unknown window)."""
    if not settings.enabled or not context_window or context_window <= 0:
        return False
    return context_tokens > context_window - settings.reserve_tokens
