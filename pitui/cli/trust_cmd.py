"""``pitui trust [DIR]``: allow a project's own extensions to run (remembered per folder)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from pitui.cli.output import say
from pitui.config.trust import is_trusted, project_wants_code, trust, untrust


def trust_description() -> str:
    """What trusting a project changes, from the keys the settings loader gates (so the help
    names every key it holds back)."""
    from pitui.config.settings import KNOWN_KEYS, PROJECT_KEYS

    held = sorted(KNOWN_KEYS - PROJECT_KEYS)
    return (
        "Opening a repository never runs its code. Until you trust a project once: its "
        "extensions (.pitui/extensions/*.py and the modules its settings name) do not load, "
        "and its .pitui/settings.json may set only how to work on it ("
        + ", ".join(sorted(PROJECT_KEYS))
        + "; approval only stricter than yours, checkpoint only towards keeping more), while "
        + ", ".join(held)
        + " are ignored with a warning. The choice is remembered per folder in your config "
        "folder; --revoke goes back."
    )


def register(sub: Any) -> None:
    p = sub.add_parser(
        "trust",
        help="let this project's extensions run and its settings apply in full",
        description=trust_description(),
    )
    p.add_argument("dir", nargs="?", default=None, help="project folder (default: here)")
    p.add_argument("--revoke", action="store_true", help="stop trusting the project")
    p.set_defaults(handler=cmd_trust)


def cmd_trust(args: argparse.Namespace) -> int:
    project = Path(args.dir or os.getcwd()).resolve()
    if args.revoke:
        untrust(project)
        say(
            f"{project} is no longer trusted; its extensions will not run and its settings "
            "may set only project-level keys."
        )
        return 0
    if is_trusted(project):
        say(f"{project} is already trusted.")
        return 0
    trust(project)
    extra = "" if project_wants_code(project) else " (it has no extensions yet)"
    say(
        f"Trusted {project}: its extensions will run and its settings apply in full from now "
        f"on{extra}."
    )
    return 0
