"""Settings (global + project JSON, merged) and the folders pitui uses (platformdirs)."""

from pitui.config.paths import (
    config_dir,
    data_dir,
    encode_cwd,
    resolve_session_folder,
    sessions_root,
    state_dir,
)
from pitui.config.settings import Settings, load_settings

__all__ = [
    "Settings",
    "config_dir",
    "data_dir",
    "encode_cwd",
    "load_settings",
    "resolve_session_folder",
    "sessions_root",
    "state_dir",
]
