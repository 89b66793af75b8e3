"""``pitui config``: the settings in effect here, each with where its value came from.

A value comes from the first of: a flag of this command line (``--model``, ``--thinking``,
``--approve``, ``--session-dir``), the environment (``PITUI_SESSION_DIR``; ``PITUI_MODEL`` when
no file sets ``defaultModel``), the project's ``.pitui/settings.json``, the global
``settings.json``, the default. An untrusted project's file is shown as pitui applies it: the
keys it may not set are ignored, its ``approval`` counts only when stricter and its
``checkpoint`` values only towards keeping more.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import msgspec

from pitui.checkpoint.settings import safer_checkpoint, stricter
from pitui.cli.output import print_json, say
from pitui.cli.session_args import run_cwd
from pitui.config import resolve_session_folder
from pitui.config.settings import Settings, full_values, leaves, load_layers
from pitui.config.trust import trust_file

DEFAULT = "default"
GLOBAL = "global file"
PROJECT = "project file"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "config",
        aliases=["settings"],
        help="show the settings in effect here and where each value came from",
        description="Every setting with its value and its source (default, global file, "
        "project file, env, flag), the settings files read and the warnings about them. "
        "Flags given before the command (--model, --thinking, --approve, --session-dir, "
        "--cwd) are applied as a run with them would apply them.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_config, fast_exit=True)


class Effective(msgspec.Struct):
    """The settings a run here would use, and the source of each value (by dotted key)."""

    settings: Settings
    sources: dict[str, str]
    notes: list[str]


def _source(key: str, layers: dict[str, dict[str, Any]]) -> str:
    for name in (PROJECT, GLOBAL):
        if key in layers[name]:
            return name
    return DEFAULT


def effective_settings(args: argparse.Namespace, cwd: str) -> tuple[Effective, Any]:
    """The settings for a run in ``cwd`` with ``args``' flags, and the files' layers."""
    files = load_layers(cwd)
    layer_leaves = {GLOBAL: leaves(files.user), PROJECT: leaves(files.project)}
    settings = files.merged()
    values = leaves(full_values(settings))
    sources = {key: _source(key, layer_leaves) for key in values}
    notes: list[str] = []
    if files.project_file is not None and files.project and not files.project_trusted:
        user = Settings.from_dict(files.user)
        mode = stricter(settings.approval, user.approval)
        if mode != settings.approval:
            settings = msgspec.structs.replace(settings, approval=mode)
            sources["approval"] = _source("approval", {GLOBAL: layer_leaves[GLOBAL], PROJECT: {}})
            notes.append("approval: the project's mode is looser than yours, so yours applies.")
        checkpoint, ignored = safer_checkpoint(settings.checkpoint, user.checkpoint)
        if ignored:
            settings = msgspec.structs.replace(settings, checkpoint=checkpoint)
            for key in ignored:
                sources[key] = _source(key, {GLOBAL: layer_leaves[GLOBAL], PROJECT: {}})
            notes.append(
                f"{', '.join(ignored)}: the project's values would keep less, so yours apply "
                "until you run `pitui trust` in it."
            )
    env_model = os.environ.get("PITUI_MODEL")
    if settings.default_model is None and env_model:
        settings = msgspec.structs.replace(settings, default_model=env_model)
        sources["defaultModel"] = "env PITUI_MODEL"
    env_dir = os.environ.get("PITUI_SESSION_DIR")
    if env_dir:
        settings = msgspec.structs.replace(settings, session_dir=env_dir)
        sources["sessionDir"] = "env PITUI_SESSION_DIR"
    flags = [  # (argument, settings attribute, key, flag)
        ("session_dir", "session_dir", "sessionDir", "--session-dir"),
        ("model", "default_model", "defaultModel", "--model"),
        ("thinking", "default_thinking_level", "defaultThinkingLevel", "--thinking"),
        ("approve", "approval", "approval", "--approve"),
    ]
    for dest, attr, key, flag in flags:
        value = getattr(args, dest, None)
        if value:
            settings = msgspec.structs.replace(settings, **{attr: value})
            sources[key] = f"flag {flag}"
    return Effective(settings, sources, notes), files


def _shown(key: str, value: Any, source: str) -> bool:
    """Unset fields of a model's entry (``models["a/b"].maxTokens: null``) are noise."""
    return not ("[" in key and value is None and source == DEFAULT)


def cmd_config(args: argparse.Namespace) -> int:
    cwd = run_cwd(args)
    effective, files = effective_settings(args, cwd)
    values = leaves(full_values(effective.settings))
    folder, _ = resolve_session_folder(cwd, effective.settings.session_dir)
    listed = [
        {"scope": "global", "path": str(files.user_file), "exists": files.user_file.is_file()}
    ]
    if files.project_file is not None:
        listed.append(
            {
                "scope": "project",
                "path": str(files.project_file),
                "exists": files.project_file.is_file(),
                "trusted": files.project_trusted,
            }
        )
    environment = {
        name: os.environ[name]
        for name in ("PITUI_MODEL", "PITUI_SESSION_DIR")
        if name in os.environ
    }
    rows = [
        (key, value, effective.sources.get(key, DEFAULT))
        for key, value in values.items()
        if _shown(key, value, effective.sources.get(key, DEFAULT))
    ]
    if args.json:
        print_json(
            {
                "cwd": cwd,
                "files": listed,
                "trustFile": str(trust_file()),
                "environment": environment,
                "sessionFolder": str(folder),
                "settings": full_values(effective.settings),
                "sources": {key: source for key, _, source in rows},
                "notes": effective.notes,
                "warnings": list(effective.settings.warnings),
            }
        )
        return 0
    say(f"Settings for {cwd}")
    for item in listed:
        state = "read" if item["exists"] else "not found"
        if item["scope"] == "project" and item["exists"]:
            state += (
                ", trusted"
                if item["trusted"]
                else ", not trusted: project keys only (`pitui trust` to apply it in full)"
            )
        say(f"  {item['scope'] + ' file':<13} {_home(str(item['path']))} ({state})")
    for name, value in environment.items():
        say(f"  {'environment':<13} {name}={value}")
    say(f"  {'sessions in':<13} {_home(str(folder))}")
    say("")
    width = max(len(key) for key, _, _ in rows)
    text = [(key, json.dumps(value, ensure_ascii=False), source) for key, value, source in rows]
    value_width = min(32, max(len(v) for _, v, _ in text))
    say(f"{'key':<{width}}  {'value':<{value_width}}  from")
    for key, value, source in text:
        say(f"{key:<{width}}  {value:<{value_width}}  {source}")
    for line in effective.notes:
        say(f"note: {line}")
    for line in effective.settings.warnings:
        say(f"warning: {line}")
    return 0


def _home(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home) :] if home != "/" and path.startswith(home + "/") else path
