"""Building an :class:`AgentSession` from command-line options (print mode, compact, TUI)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from pitui.agent.extensions import Extensions
from pitui.agent.session import AgentSession
from pitui.agent.trust import is_trusted
from pitui.cli.output import note
from pitui.config.settings import Settings
from pitui.session import SessionStore


def load_extensions(cwd: str, settings: Settings, err: TextIO | None) -> Extensions:
    """The user's extensions, plus the project's once the project is trusted (``pitui trust``)."""
    extensions = Extensions()
    for warning in extensions.load(Path(cwd), settings, trusted=is_trusted(Path(cwd))):
        if err is not None:
            note(f"warning: {warning}", err)
    return extensions


def build_agent(
    args: argparse.Namespace,
    store: SessionStore,
    cwd: str,
    settings: Settings,
    err: TextIO | None,
) -> AgentSession:
    return AgentSession(
        store,
        cwd=store.cwd or cwd,
        model=getattr(args, "model", None),
        api_base=getattr(args, "api_base", None),
        thinking=getattr(args, "thinking", None),
        settings=settings,
        extensions=load_extensions(cwd, settings, err),
    )
