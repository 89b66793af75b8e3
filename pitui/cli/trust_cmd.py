"""``pitui trust [DIR]``: allow a project's own extensions to run (remembered per folder)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pitui.agent.trust import is_trusted, project_wants_code, trust, untrust
from pitui.cli.output import say


def register(sub: Any) -> None:
    p = sub.add_parser(
        "trust",
        help="let this project's extensions (.pitui/extensions, project settings) run",
        description="Opening a repository never runs its code: a project's extensions load only "
        "after you trust the project once. The choice is remembered in your config folder.",
    )
    p.add_argument("dir", nargs="?", default=None, help="project folder (default: here)")
    p.add_argument("--revoke", action="store_true", help="stop trusting the project")
    p.set_defaults(handler=cmd_trust)


def cmd_trust(args: argparse.Namespace) -> int:
    project = Path(args.dir or os.getcwd()).resolve()
    if args.revoke:
        untrust(project)
        say(f"{project} is no longer trusted; its extensions will not run.")
        return 0
    if is_trusted(project):
        say(f"{project} is already trusted.")
        return 0
    trust(project)
    extra = "" if project_wants_code(project) else " (it has no extensions yet)"
    say(f"Trusted {project}: its extensions will run from now on{extra}.")
    return 0
