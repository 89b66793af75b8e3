"""Project trust: opening a repository must not run its code.

A project's own extensions (``<project>/.pitui/extensions/*.py`` and the modules its
``.pitui/settings.json`` names in ``extensions``) are loaded only once the user has trusted that
project. Trust is remembered in ``<config dir>/trusted-projects.json``, keyed by the project's
resolved absolute path (so a symlink and its target are the same project, and a subfolder is
a different one)::

    {"/home/me/src/app": {"trustedAt": "2025-01-01T00:00:00Z"}}

An unreadable or malformed file trusts nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pitui.config.paths import config_dir
from pitui.durable import replace_atomically
from pitui.private import FILE_MODE, ensure_private_folder

TRUST_FILE = "trusted-projects.json"


def trust_file() -> Path:
    return config_dir() / TRUST_FILE


def _key(project: Path) -> str:
    return str(Path(project).expanduser().resolve())


def _load() -> dict[str, Any]:
    try:
        value = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _save(data: dict[str, Any]) -> None:
    """Write the trust file durably and all at once (:func:`pitui.durable.replace_atomically`),
    mode 0600."""
    path = trust_file()
    ensure_private_folder(path.parent)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    replace_atomically(path, text.encode("utf-8"), mode=FILE_MODE)


def is_trusted(project: Path) -> bool:
    """Whether the user has trusted this project (its resolved path); never raises."""
    return bool(_load().get(_key(project)))


def trust(project: Path) -> None:
    """Remember that this project's code may run (raises ``OSError`` if it cannot be saved)."""
    data = _load()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    data[_key(project)] = {"trustedAt": stamp}
    _save(data)


def untrust(project: Path) -> None:
    """Forget this project's trust (a no-op if it was not trusted)."""
    data = _load()
    if data.pop(_key(project), None) is not None:
        _save(data)


def project_wants_code(project: Path) -> bool:
    """Whether the project has extensions of its own that would run if it were trusted:
    ``.pitui/extensions/*.py`` files, or a non-empty ``extensions`` in ``.pitui/settings.json``."""
    folder = Path(project) / ".pitui"
    extensions = folder / "extensions"
    if extensions.is_dir() and any(
        p.is_file() and not p.name.startswith(".") for p in extensions.glob("*.py")
    ):
        return True
    try:
        settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(settings, dict) and bool(settings.get("extensions"))
