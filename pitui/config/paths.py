"""Where pitui keeps things. Session folders follow pi's layout and naming."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "pitui"


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def state_dir() -> Path:
    return Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))


def log_file() -> Path:
    """Where the TUI logs internal errors with their tracebacks (``<state dir>/pitui.log``)."""
    return state_dir() / "pitui.log"


def sessions_root() -> Path:
    return data_dir() / "sessions"


def encode_cwd(cwd: str) -> str:
    """pi's folder name for a working directory: ``/a/b`` → ``--a-b--``."""
    stripped = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + stripped.replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def resolve_session_folder(
    cwd: str, flag: str | None = None, setting: str | None = None
) -> tuple[Path, bool]:
    """The folder that holds this directory's sessions, and whether it was given explicitly.

    ``--session-dir`` wins over ``PITUI_SESSION_DIR``, which wins over the ``sessionDir``
    setting; an explicit folder holds the files directly (no per-directory subfolder).
    """
    for value in (flag, os.environ.get("PITUI_SESSION_DIR"), setting):
        if value:
            return Path(os.path.expanduser(value)).absolute(), True
    return sessions_root() / encode_cwd(cwd), False
