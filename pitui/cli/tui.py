"""``pitui`` with no command: the full-screen app."""

from __future__ import annotations

import argparse
import os
import sys

from pitui.agent.session import AgentSession
from pitui.cli.agent_setup import build_agent, workspace_settings
from pitui.cli.session_args import open_session, session_folder
from pitui.config import load_settings
from pitui.session import SessionStore


def run_tui(args: argparse.Namespace) -> int:
    cwd = os.getcwd()
    settings = load_settings(cwd)
    if getattr(args, "demo", False):
        from pitui.ui.demo import run_demo

        return run_demo(settings)
    store: SessionStore = open_session(args, cwd, settings)
    folder = session_folder(args, cwd, settings)
    warnings = [str(w) for w in store.warnings] + list(settings.warnings)
    warnings += workspace_settings(args, cwd, settings).warnings

    def make_agent(s: SessionStore) -> AgentSession:
        return build_agent(args, s, cwd, settings, None, interactive=True)

    from pitui.ui.app import PituiApp

    app = PituiApp(
        store,
        agent_factory=make_agent,
        settings=settings,
        cwd=cwd,
        session_folder=folder,
        startup_warnings=warnings,
        open_picker=bool(getattr(args, "resume", False)),
    )
    code = app.run()
    sys.stdout.flush()
    return int(code or 0)
