"""The settings checkpoints and approval modes read, in one place (:func:`read_workspace_settings`).

Keys (all optional)::

    "checkpoint": {
        "enabled": true,             # capture workspace checkpoints on the session tree
        "exclude": ["*.log", "data/"],  # gitignore patterns, on top of .gitignore and defaults
        "maxFileSizeMB": 10,         # larger files are skipped (with a note)
        "skipBinaryChurn": true,     # skip binary files that change at every checkpoint
        "maxFiles": 100000,          # a folder with more files is not checkpointed
        "keepDays": 30,              # other sessions' checkpoints older than this are pruned
        "maxStoreMB": 2048           # then the oldest go until the store fits
    },
    "approval": "auto",              # auto | ask | read-only
    "allow": {"bash": ["git status*", "pytest*"], "edit": ["docs/*"], "write": ["docs/*"]}

A value of the wrong type is ignored (the default applies) with a warning; an unknown approval
mode means ``ask`` (the safe side), never ``auto``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pitui.config.settings import Settings

ApprovalMode = Literal["auto", "ask", "read-only"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("auto", "ask", "read-only")
_STRICTNESS = {"auto": 0, "ask": 1, "read-only": 2}

DEFAULT_EXCLUDES: tuple[str, ...] = (
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "*.pyc",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".DS_Store",
    ".pitui-staging-*/",
)
"""Never checkpointed, even in a folder without a ``.gitignore``."""


@dataclass(frozen=True)
class CheckpointSettings:
    enabled: bool = True
    exclude: tuple[str, ...] = ()
    max_file_size: int = 10 * 1024 * 1024
    skip_binary_churn: bool = True
    max_files: int = 100_000
    keep_days: float = 30.0
    max_store_bytes: int = 2048 * 1024 * 1024


@dataclass(frozen=True)
class ApprovalSettings:
    mode: ApprovalMode = "auto"
    allow: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkspaceSettings:
    checkpoint: CheckpointSettings = field(default_factory=CheckpointSettings)
    approval: ApprovalSettings = field(default_factory=ApprovalSettings)
    warnings: tuple[str, ...] = ()


def stricter(a: ApprovalMode, b: ApprovalMode) -> ApprovalMode:
    """The stricter of two approval modes (read-only > ask > auto)."""
    return a if _STRICTNESS[a] >= _STRICTNESS[b] else b


def read_workspace_settings(
    settings: Settings,
    *,
    approve: str | None = None,
    user_only: Settings | None = None,
) -> WorkspaceSettings:
    """Every checkpoint and approval setting, checked.

    ``approve`` is the ``--approve`` flag (it wins). ``user_only`` holds the user's own settings
    when the project is not trusted: then the project's settings can make the approval mode
    stricter but never looser, and its allow-lists are ignored (opening a repository must not
    grant its commands).
    """
    warnings: list[str] = []

    def number(key: str, default: float, minimum: float = 0) -> float:
        value = settings.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
            warnings.append(f"Ignoring setting {key}: it must be a number of at least {minimum}.")
            return default
        return float(value)

    def flag(key: str, default: bool) -> bool:
        value = settings.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            warnings.append(f"Ignoring setting {key}: it must be true or false.")
            return default
        return value

    exclude_raw = settings.get("checkpoint.exclude")
    exclude: tuple[str, ...] = ()
    if exclude_raw is not None:
        if isinstance(exclude_raw, list) and all(isinstance(p, str) for p in exclude_raw):
            exclude = tuple(p for p in exclude_raw if p.strip())
        else:
            warnings.append("Ignoring setting checkpoint.exclude: it must be a list of patterns.")
    checkpoint = CheckpointSettings(
        enabled=flag("checkpoint.enabled", True),
        exclude=exclude,
        max_file_size=int(number("checkpoint.maxFileSizeMB", 10, 0.001) * 1024 * 1024),
        skip_binary_churn=flag("checkpoint.skipBinaryChurn", True),
        max_files=int(number("checkpoint.maxFiles", 100_000, 1)),
        keep_days=number("checkpoint.keepDays", 30, 0),
        max_store_bytes=int(number("checkpoint.maxStoreMB", 2048, 1) * 1024 * 1024),
    )

    def mode_of(source: Settings, where: str) -> ApprovalMode:
        value = source.get("approval")
        if value is None:
            return "auto"
        if value in APPROVAL_MODES:
            return cast(ApprovalMode, value)
        warnings.append(
            f"Unknown approval mode {value!r} in {where}: using ask (one of auto, ask, read-only)."
        )
        return "ask"

    mode = mode_of(settings, "settings")
    allow_source = settings
    if user_only is not None:
        mode = stricter(mode, mode_of(user_only, "your settings"))
        allow_source = user_only
    if approve is not None:
        if approve not in APPROVAL_MODES:
            raise ValueError(f"unknown approval mode {approve!r}")
        mode = cast(ApprovalMode, approve)
    allow: dict[str, tuple[str, ...]] = {}
    raw_allow: Any = allow_source.get("allow")
    if raw_allow is not None:
        if not isinstance(raw_allow, dict):
            warnings.append('Ignoring setting allow: it must look like {"bash": ["git status*"]}.')
        else:
            for tool, patterns in raw_allow.items():
                if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
                    allow[str(tool)] = tuple(p.strip() for p in patterns if p.strip())
                else:
                    warnings.append(
                        f"Ignoring setting allow.{tool}: it must be a list of patterns."
                    )
    return WorkspaceSettings(
        checkpoint=checkpoint,
        approval=ApprovalSettings(mode=mode, allow=allow),
        warnings=tuple(warnings),
    )
