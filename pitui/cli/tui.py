"""``pitui`` with no command: the full-screen app.

Python logging goes to ``<state dir>/pitui.log`` while it runs (Textual swallows stderr), so
internal errors leave their traceback there. On quit the process ends the moment the terminal
is restored, once the session is closed and flushed (leaf marker, lock released; see
:meth:`pitui.ui.app.PituiApp.terminal_restored`), without Textual taking down every widget nor
the interpreter its heap; any other way out returns here and ``pitui.cli.main`` leaves at once.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from pitui import collector
from pitui.agent.session import AgentSession
from pitui.cli.agent_setup import build_agent
from pitui.cli.session_args import open_session, run_cwd, session_folder
from pitui.config import load_settings
from pitui.session import SessionStore

SWITCH_INTERVAL = 0.001
"""Seconds a thread runs before the interpreter hands over to another (Python's default is
0.005)."""


def run_tui(args: argparse.Namespace) -> int:
    from pitui.config.logs import configure_logging
    from pitui.config.paths import log_file

    log_path = configure_logging(log_file())
    try:
        return _run(args, log_path)
    finally:
        logging.shutdown()


def _run(args: argparse.Namespace, log_path: Path) -> int:
    cwd = run_cwd(args)
    settings = load_settings(cwd)
    if getattr(args, "demo", False):
        collector.resume(collector.STARTUP)  # paused since start-up (pitui.cli)
        from pitui.ui.demo import run_demo

        return run_demo(settings)
    # A session that cannot be written (held by another pitui, a full disk) opens read-only;
    # the app says why in a notice.
    store: SessionStore = open_session(args, cwd, settings, allow_read_only=True)
    folder = session_folder(args, cwd, settings)
    warnings = [str(w) for w in store.warnings] + list(settings.warnings)

    # --cwd: the tools work there; otherwise in each session's own directory, and the app asks
    # when that is gone (continue here / fork here / cancel).
    forced_work_dir = cwd if getattr(args, "cwd", None) else None

    def make_agent(s: SessionStore) -> AgentSession:
        return build_agent(args, s, cwd, settings, None, forced_work_dir, interactive=True)

    from pitui.ui.app import PituiApp

    app = PituiApp(
        store,
        agent_factory=make_agent,
        settings=settings,
        cwd=cwd,
        session_folder=folder,
        startup_warnings=warnings,
        open_picker=bool(getattr(args, "resume", False)),
        log_path=log_path,
        ask_missing_cwd=forced_work_dir is None,
    )
    app.exit_deadline = 3.0  # after SIGTERM/SIGHUP, never hang on the way out
    app.leave_at_once = True  # a clean quit: out once the terminal is back and the session closed
    # The collector is off since start-up (pitui.cli): on again once the first frame is shown.
    app.after_first_frame.append(collector.resumer(collector.STARTUP))
    # The session's nodes and the modules loaded so far live as long as the app: keep them out
    # of the cyclic collector's full passes, which otherwise walk every node of a big session
    # while the first frame is built (and at every later full collection). Unfrozen when the
    # app switches sessions, so the old one's nodes can be collected.
    collector.freeze()
    # The UI thread shares the interpreter with threads that compute (the provider loop, a
    # tree search, litellm's import): each time it wakes (a key, a frame to write) it waits out
    # the running thread's switch interval, 5 ms by default, several times per key. At 1 ms the
    # slowest key during a 200k-entry tree search went from 36-103 ms to 34-36 ms, and a
    # streamed reply's CPU and end lag went down too (benchmarks/README.md).
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        app.run()
    finally:
        sys.setswitchinterval(previous)
    sys.stdout.flush()
    # Textual sets return_code 1 when the app crashed: that must not look like success.
    return app.return_code or 0
