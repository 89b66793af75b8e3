"""Building an :class:`AgentSession` from command-line options (print mode, compact, TUI)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from pitui.agent.extensions import Extensions
from pitui.agent.session import AgentSession
from pitui.agent.workspace import Workspace
from pitui.checkpoint.settings import WorkspaceSettings, workspace_settings_for
from pitui.cli.output import note
from pitui.config.settings import Settings
from pitui.config.trust import is_trusted
from pitui.session import SessionStore


def load_extensions(cwd: str, settings: Settings, err: TextIO | None) -> Extensions:
    """The user's extensions, plus the project's once the project is trusted (``pitui trust``)."""
    extensions = Extensions()
    for warning in extensions.load(Path(cwd), settings, trusted=is_trusted(Path(cwd))):
        if err is not None:
            note(f"warning: {warning}", err)
    return extensions


def workspace_settings(args: argparse.Namespace, cwd: str, settings: Settings) -> WorkspaceSettings:
    """Checkpoint and approval settings; an untrusted project may only make them safer."""
    return workspace_settings_for(cwd, settings, approve=getattr(args, "approve", None))


def build_agent(
    args: argparse.Namespace,
    store: SessionStore,
    cwd: str,
    settings: Settings,
    err: TextIO | None,
    work_dir: str | None = None,
    *,
    interactive: bool = False,
) -> AgentSession:
    """The agent for ``store``; its tools work in ``work_dir`` (default: the session's own
    directory, else ``cwd``). ``interactive``: someone can answer approval questions (the
    TUI)."""
    folder = work_dir or store.cwd or cwd
    ws_settings = workspace_settings(args, cwd, settings)
    return AgentSession(
        store,
        cwd=folder,
        model=getattr(args, "model", None),
        api_base=getattr(args, "api_base", None),
        thinking=getattr(args, "thinking", None),
        settings=settings,
        extensions=load_extensions(cwd, settings, err),
        workspace=Workspace(ws_settings, folder, interactive=interactive),
    )
