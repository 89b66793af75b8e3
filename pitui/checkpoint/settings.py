"""The settings checkpoints and approval modes read, in one place (:func:`read_workspace_settings`).

The keys are declared with their types and defaults in :mod:`pitui.config.settings`
(``checkpoint``, ``approval``, ``allow``); a value of the wrong type is reported there and falls
back to its default, except the approval mode: a bad one means ``ask`` (the safe side), never
``auto``. This module turns them into what the checkpoint store and the approval guard use, and
applies the trust rule (an untrusted project cannot loosen approvals) and ``--approve``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from pitui.config.settings import ApprovalMode, Settings

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


_MB = 1024 * 1024


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
    config = settings.checkpoint
    checkpoint = CheckpointSettings(
        enabled=config.enabled,
        exclude=tuple(p for p in config.exclude if p.strip()),
        max_file_size=int(config.max_file_size_mb * _MB),
        skip_binary_churn=config.skip_binary_churn,
        max_files=config.max_files,
        keep_days=float(config.keep_days),
        max_store_bytes=int(config.max_store_mb * _MB),
    )
    mode: ApprovalMode = settings.approval
    allow_source = settings
    if user_only is not None:
        mode = stricter(mode, user_only.approval)
        allow_source = user_only
    if approve is not None:
        if approve not in APPROVAL_MODES:
            raise ValueError(f"unknown approval mode {approve!r}")
        mode = cast(ApprovalMode, approve)
    allow = {
        str(tool): tuple(p.strip() for p in patterns if p.strip())
        for tool, patterns in allow_source.allow.items()
    }
    return WorkspaceSettings(
        checkpoint=checkpoint, approval=ApprovalSettings(mode=mode, allow=allow)
    )
