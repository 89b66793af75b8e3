"""Settings: ``<config dir>/settings.json`` deep-merged with ``<project>/.pitui/settings.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pitui.config.paths import config_dir


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


@dataclass
class Settings:
    """Merged settings plus the problems found reading them (shown, never fatal)."""

    values: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def get(self, key: str, default: Any = None) -> Any:
        node: Any = self.values
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node


def _read(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        warnings.append(f"Could not read settings {path}: {exc.strerror}.")
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        warnings.append(f"Ignoring settings {path}: invalid JSON ({exc}).")
        return {}
    if not isinstance(value, dict):
        warnings.append(f"Ignoring settings {path}: it is not a JSON object.")
        return {}
    return value


def load_settings(cwd: str | None = None) -> Settings:
    warnings: list[str] = []
    merged = _read(config_dir() / "settings.json", warnings)
    if cwd:
        merged = deep_merge(merged, _read(Path(cwd) / ".pitui" / "settings.json", warnings))
    return Settings(merged, warnings)
