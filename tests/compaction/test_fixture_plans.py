"""Compaction plans on the fixtures agree with pi 1.6's answers (expected/*.compaction.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fixtures import FIXTURES_DIR as FIXTURES
from support.fixtures import expected_files

from pitui.cli import main
from pitui.compaction.prepare import plan_json
from pitui.compaction.settings import CompactionSettings
from pitui.session import SessionStore

EXPECTED = expected_files("*.compaction.json")


def _case(path: Path) -> tuple[Path, str | None, dict[str, object]]:
    fixture, leaf = path.name.split(".")[:2]
    return (
        FIXTURES / f"{fixture}.jsonl",
        None if leaf == "default" else leaf,
        json.loads(path.read_text()),
    )


@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.name)
def test_plan_matches_pi(expected_path: Path) -> None:
    fixture, leaf, expected = _case(expected_path)
    settings = expected["settings"]
    assert isinstance(settings, dict)
    store = SessionStore.open(fixture, read_only=True)
    got = plan_json(
        store,
        leaf,
        CompactionSettings(True, settings["reserveTokens"], settings["keepRecentTokens"]),
        200000,
        "anthropic/claude-sonnet-4-5",
    )
    for key, value in expected.items():
        assert got.get(key) == value, key


@pytest.mark.parametrize(
    "expected_path", [p for p in EXPECTED if ".keep200." in p.name], ids=lambda p: p.name
)
def test_cli_dry_run_json_matches_pi(
    expected_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture, leaf, expected = _case(expected_path)
    argv = ["compact", str(fixture), "--dry-run", "--json", "--keep-recent", "200"]
    argv += ["--context-window", "200000"] + (["--leaf", leaf] if leaf else [])
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    for key in (
        "settings",
        "contextWindow",
        "contextTokens",
        "shouldCompact",
        "perMessageTokens",
        "prepared",
        "firstKeptEntryId",
        "isSplitTurn",
        "turnStartEntryId",
        "messagesToSummarizeIds",
        "turnPrefixMessageIds",
        "keptContextEntryIds",
        "previousSummary",
        "tokensBefore",
        "fileOps",
        "serializedConversation",
        "serializedTurnPrefix",
    ):
        assert got.get(key) == expected.get(key), key


def test_dry_run_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = FIXTURES / "pi-v3-context-edit.jsonl"
    before = fixture.read_bytes()
    assert main(["compact", str(fixture), "--dry-run", "--keep-recent", "200"]) == 0
    out = capsys.readouterr().out
    assert "summarize 6 messages + a turn prefix of 1" in out
    assert fixture.read_bytes() == before
