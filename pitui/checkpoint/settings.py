"""The settings checkpoints and approval modes read, in one place (:func:`read_workspace_settings`).

The keys are declared with their types and defaults in :mod:`pitui.config.settings`
(``checkpoint``, ``approval``, ``allow``); a value of the wrong type is reported there and falls
back to its default, except the approval mode: a bad one means ``ask`` (the safe side), never
``auto``. This module turns them into what the checkpoint store and the approval guard use, and
applies the trust rule and ``--approve``: before ``pitui trust``, a project's settings may only
make things safer. Its approval mode counts only where it is stricter, its allow-lists are
ignored, and its ``checkpoint`` values only where the net keeps at least as much as the user's
settings say (``enabled: false``, more ``exclude`` patterns, a lower ``maxFileSizeMB``,
``maxFiles``, ``keepDays`` or ``maxStoreMB``, ``skipBinaryChurn`` turned on are ignored, with
one note naming them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from pitui.config.settings import (
    ApprovalMode,
    CheckpointConfig,
    Settings,
    load_settings,
    project_settings_path,
)
from pitui.config.trust import is_trusted

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
    notes: tuple[str, ...] = ()
    """What the user should be told about these settings (project values ignored)."""

    def without_notes(self) -> WorkspaceSettings:
        return replace(self, notes=())


_MB = 1024 * 1024


def stricter(a: ApprovalMode, b: ApprovalMode) -> ApprovalMode:
    """The stricter of two approval modes (read-only > ask > auto)."""
    return a if _STRICTNESS[a] >= _STRICTNESS[b] else b


def safer_checkpoint(
    config: CheckpointConfig, user: CheckpointConfig
) -> tuple[CheckpointConfig, list[str]]:
    """``config`` (merged with an untrusted project's) with every value that would make the
    net keep less than ``user`` (the user's own) put back; the keys put back."""
    ignored: list[str] = []
    values = {
        "enabled": (config.enabled or not user.enabled, "enabled"),
        "exclude": (not set(config.exclude) - set(user.exclude), "exclude"),
        "max_file_size_mb": (config.max_file_size_mb >= user.max_file_size_mb, "maxFileSizeMB"),
        "skip_binary_churn": (not config.skip_binary_churn or user.skip_binary_churn, None),
        "max_files": (config.max_files >= user.max_files, "maxFiles"),
        "keep_days": (config.keep_days >= user.keep_days, "keepDays"),
        "max_store_mb": (config.max_store_mb >= user.max_store_mb, "maxStoreMB"),
    }
    changes = {}
    for attr, (safe, key) in values.items():
        if not safe:
            changes[attr] = getattr(user, attr)
            ignored.append(f"checkpoint.{key or 'skipBinaryChurn'}")
    if not changes:
        return config, []
    merged = {f: getattr(config, f) for f in config.__struct_fields__}
    merged.update(changes)
    return CheckpointConfig(**merged), ignored


def read_workspace_settings(
    settings: Settings,
    *,
    approve: str | None = None,
    user_only: Settings | None = None,
    project_file: Path | None = None,
) -> WorkspaceSettings:
    """Every checkpoint and approval setting, checked.

    ``approve`` is the ``--approve`` flag (it wins). ``user_only`` holds the user's own settings
    when the project is not trusted: then the project's settings may only make things safer
    (see the module docstring; opening a repository must not grant its commands nor switch
    the safety net off). ``project_file`` names the project's settings file in the note.
    """
    config = settings.checkpoint
    notes: list[str] = []
    if user_only is not None:
        config, ignored = safer_checkpoint(config, user_only.checkpoint)
        if ignored:
            where = f" in {project_file}" if project_file is not None else ""
            notes.append(
                f"Ignoring {', '.join(ignored)}{where}: until you run `pitui trust` in this "
                "project, its settings may only make file checkpoints keep more, never less."
            )
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
        checkpoint=checkpoint,
        approval=ApprovalSettings(mode=mode, allow=allow),
        notes=tuple(notes),
    )


def workspace_settings_for(
    cwd: str | Path, settings: Settings | None = None, *, approve: str | None = None
) -> WorkspaceSettings:
    """:func:`read_workspace_settings` for the project in ``cwd``, with the trust rule:
    ``settings`` are the merged settings (default: loaded for ``cwd``)."""
    folder = Path(cwd)
    merged = settings if settings is not None else load_settings(str(folder))
    trusted = is_trusted(folder)
    return read_workspace_settings(
        merged,
        approve=approve,
        user_only=None if trusted else load_settings(None),
        project_file=None if trusted else project_settings_path(folder),
    )
