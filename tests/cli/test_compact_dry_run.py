"""`pitui compact --dry-run` resolves the settings exactly as a real run does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fixtures import fixture_path

from pitui.cli import main

FIXTURE = fixture_path("pi-v1-large-session.jsonl")


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _plan(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["compact", str(FIXTURE), "--dry-run", "--json", *argv]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert isinstance(plan, dict)
    return plan


def test_small_windows_clamp_defaults_but_not_given_values(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(["--context-window", "8192"], capsys)
    assert plan["settings"] == {"enabled": True, "reserveTokens": 2048, "keepRecentTokens": 4096}
    plan = _plan(["--context-window", "8192", "--keep-recent", "6000"], capsys)
    assert plan["settings"]["keepRecentTokens"] == 6000  # type: ignore[index]
    settings = isolated / "config" / "pitui" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"compaction": {"reserveTokens": 3000}}))
    plan = _plan(["--context-window", "8192"], capsys)
    assert plan["settings"] == {"enabled": True, "reserveTokens": 3000, "keepRecentTokens": 4096}
    assert plan["threshold"] == 8192 - 3000


def test_text_plan_says_what_is_left_after_compacting(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compact", str(FIXTURE), "--dry-run", "--keep-recent", "2000"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("tokens before"))
    assert "after compacting ~" in line and "kept verbatim, plus the summary" in line
    plan = _plan(["--keep-recent", "2000"], capsys)
    assert 0 < plan["keptTokens"] < plan["tokensBefore"]  # type: ignore[operator]


def test_per_message_tokens_follow_the_estimator(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chars4 = _plan([], capsys)["perMessageTokens"]
    tiktoken = _plan(["--estimator", "tiktoken"], capsys)["perMessageTokens"]
    assert isinstance(chars4, list) and isinstance(tiktoken, list)
    assert len(chars4) == len(tiktoken)
    assert [m["tokens"] for m in chars4] != [m["tokens"] for m in tiktoken]


def test_model_options_work_after_the_subcommand(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(["--model", "openai/gpt-4.1"], capsys)
    assert plan["settingsModel"] == "openai/gpt-4.1"
    assert main(["--model", "openai/gpt-4.1", "compact", str(FIXTURE), "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settingsModel"] == "openai/gpt-4.1"
