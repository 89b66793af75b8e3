"""``pitui compact FILE``: plan (``--dry-run``) or run a compaction from the command line."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

import msgspec

from pitui.cli.errors import CliError
from pitui.cli.inspect_cmds import SESSION_HELP, open_for_reading, resolve_entry_id
from pitui.cli.output import note, print_json, say
from pitui.cli.session_args import session_file
from pitui.compaction.estimator import ESTIMATORS, get_estimator
from pitui.compaction.prepare import plan_json
from pitui.compaction.settings import CompactionSettings, SettingsError, resolve_settings
from pitui.config import Settings, load_settings
from pitui.session import SessionFileError, SessionStore

DEFAULT_WINDOW = 200000


def register(sub: Any) -> None:
    p = sub.add_parser(
        "compact",
        help="plan (--dry-run) or run a compaction of a session",
        description="Without --dry-run the configured model writes the summary and a compaction "
        "entry is appended.",
    )
    p.add_argument("file", help=SESSION_HELP)
    p.add_argument("--leaf", metavar="ID", help="plan at this entry (dry run only)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; call no model")
    p.add_argument("--keep-recent", type=int, metavar="N", help="tokens to keep verbatim")
    p.add_argument("--reserve", type=int, metavar="N", help="tokens reserved for the reply")
    p.add_argument("--context-window", type=int, metavar="N", help="the model's window")
    p.add_argument("--estimator", choices=ESTIMATORS, default="chars4", help="token estimator")
    p.add_argument("--instructions", metavar="TEXT", help="extra focus for the summary")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    # The model options also work after the subcommand (`pitui compact F --model M`); when not
    # given here, the ones before it stay.
    p.add_argument("--model", metavar="M", default=argparse.SUPPRESS, help="the summarizing model")
    p.add_argument("--api-base", metavar="URL", default=argparse.SUPPRESS, help="its server")
    p.add_argument(
        "--thinking",
        metavar="L",
        choices=["off", "minimal", "low", "medium", "high"],
        default=argparse.SUPPRESS,
        help="thinking level for the summary",
    )
    p.set_defaults(handler=cmd_compact)


def _model_key(store: SessionStore, args: argparse.Namespace) -> str | None:
    if getattr(args, "model", None):
        return str(args.model)
    model = store.project().model
    if model and model.get("provider") and model.get("modelId"):
        return f"{model['provider']}/{model['modelId']}"
    return None


def _settings(args: argparse.Namespace, section: Any, model_key: str | None) -> CompactionSettings:
    try:
        base = resolve_settings(section, model_key)
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    return base.with_values(args.reserve, args.keep_recent)


def _window(args: argparse.Namespace, model_key: str | None, overrides: Any) -> int:
    if args.context_window:
        return int(args.context_window)
    if model_key:
        from pitui.llm.models import ModelRef, model_info

        window = model_info(ModelRef.parse(model_key), overrides).context_window
        if window:
            return window
    return DEFAULT_WINDOW


def render_plan(plan: dict[str, Any]) -> str:
    lines = [
        f"leaf {plan['leafId']}  context {plan['contextTokens']:,} tokens of "
        f"{plan['contextWindow']:,} (compacts above {plan['threshold']:,}; "
        f"{'over' if plan['shouldCompact'] else 'under'} the threshold)",
    ]
    if not plan["prepared"]:
        lines.append(f"nothing to plan: {plan['notPreparedReason']}")
        return "\n".join(lines)
    kept = plan["keptContextEntryIds"]
    lines += [
        f"summarize {len(plan['messagesToSummarizeIds'])} messages"
        + (
            f" + a turn prefix of {len(plan['turnPrefixMessageIds'])}"
            if plan["isSplitTurn"]
            else ""
        )
        + (", updating the previous summary" if plan["previousSummary"] else ""),
        f"keep {len(kept)} entries verbatim from {plan['firstKeptEntryId']}"
        + (
            f" (splits the turn started at {plan['turnStartEntryId']})"
            if plan["isSplitTurn"]
            else ""
        ),
        f"tokens before {plan['tokensBefore']:,}; after compacting ~{plan['keptTokens']:,} "
        "kept verbatim, plus the summary",
        f"files read: {', '.join(plan['fileOps']['readFiles']) or 'none'}",
        f"files modified: {', '.join(plan['fileOps']['modifiedFiles']) or 'none'}",
    ]
    return "\n".join(lines)


def cmd_compact(args: argparse.Namespace) -> int:
    cwd = os.getcwd()
    settings = load_settings(cwd)
    args.file = session_file(args)
    if args.dry_run:
        store = open_for_reading(args.file)
        try:
            leaf = resolve_entry_id(store, args.leaf) if args.leaf else store.leaf_id
            model_key = _model_key(store, args)
            window = _window(args, model_key, settings.models_section())
            # Resolved exactly as a real run does: user values as given, defaults fitted to
            # a small window.
            compaction = _settings(args, settings.compaction.section(), model_key).for_window(
                window
            )
            estimator = get_estimator(args.estimator, model_key)
            plan = plan_json(store, leaf, compaction, window, model_key, estimator)
        finally:
            store.close()
        if args.json:
            print_json(plan)
        else:
            say(render_plan(plan))
        return 0
    if args.leaf:
        raise CliError("--leaf is only for --dry-run: a compaction is appended at the leaf.")
    return _run(args, cwd, settings)


def _run(args: argparse.Namespace, cwd: str, settings: Settings) -> int:
    from pitui.agent.compactor import CompactionFailed
    from pitui.cli.agent_setup import build_agent
    from pitui.cli.session_args import read_only_refusal

    try:
        store = SessionStore.open(args.file)
    except SessionFileError as exc:
        raise CliError(str(exc)) from None
    if store.read_only:
        refusal = read_only_refusal(store, can_fork=False)
        store.close()
        raise CliError(refusal)
    try:
        compaction = settings.compaction
        if args.keep_recent is not None:
            compaction = msgspec.structs.replace(compaction, keep_recent_tokens=args.keep_recent)
        if args.reserve is not None:
            compaction = msgspec.structs.replace(compaction, reserve_tokens=args.reserve)
        if args.estimator != "chars4":
            compaction = msgspec.structs.replace(compaction, estimator=args.estimator)
        settings = msgspec.structs.replace(settings, compaction=compaction)
        agent = build_agent(args, store, cwd, settings, sys.stderr)
        problem = agent.problem()
        if problem:
            note(problem)
            return 1
        try:
            result = asyncio.run(agent.compact(args.instructions))
        except CompactionFailed as exc:
            note(str(exc))
            return 1 if not str(exc).startswith(("Already", "Nothing")) else 0
        if args.json:
            print_json(
                {
                    "entryId": result.entry_id,
                    "firstKeptEntryId": result.first_kept_entry_id,
                    "tokensBefore": result.tokens_before,
                    "summary": result.summary,
                    "fromHook": result.from_hook,
                }
            )
        else:
            say(
                f"Compacted from {result.tokens_before:,} tokens; kept from "
                f"{result.first_kept_entry_id} (entry {result.entry_id})."
            )
        return 0
    finally:
        store.close()
