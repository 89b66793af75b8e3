"""The project's prompt history file: private, bounded, newest last, no repeats in a row."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pitui.config import history
from pitui.config.history import PromptHistory, history_file, merge_history


def test_prompts_are_kept_newest_last_without_consecutive_repeats(tmp_path: Path) -> None:
    h = PromptHistory.for_project(tmp_path / "app", tmp_path / "state")
    for text in ["fix the bug", "fix the bug", "  run tests  ", "fix the bug", ""]:
        h.add(text)
    assert h.load() == ["fix the bug", "run tests", "fix the bug"]
    # Another pitui in the same project reads the same file.
    assert PromptHistory.for_project(tmp_path / "app", tmp_path / "state").load()[-1] == (
        "fix the bug"
    )


def test_the_file_and_its_folder_are_private(tmp_path: Path) -> None:
    h = PromptHistory.for_project(tmp_path / "app", tmp_path / "state")
    h.add("my token is sk-123")
    assert stat.S_IMODE(h.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(h.path.parent.stat().st_mode) == 0o700


def test_each_project_has_its_own_file_named_like_its_sessions_folder(tmp_path: Path) -> None:
    one = history_file(tmp_path / "one", tmp_path / "state")
    two = history_file(tmp_path / "two", tmp_path / "state")
    assert one != two
    assert one.name.startswith("--") and one.name.endswith("one--.jsonl")
    deep = tmp_path / ("x" * 120) / ("y" * 120)
    assert len(history_file(deep, tmp_path / "state").name) < 60  # hashed, not too long


def test_multi_line_and_unicode_prompts_round_trip(tmp_path: Path) -> None:
    h = PromptHistory(tmp_path / "h.jsonl")
    h.add("line one\nline two ✓ \x1b[31m")
    assert h.load() == ["line one\nline two ✓ \x1b[31m"]
    assert len(h.path.read_bytes().splitlines()) == 1


def test_bad_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'"one"\n{not json\n42\n"two"\n')
    assert PromptHistory(path).load() == ["one", "two"]


def test_the_file_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "MAX_ENTRIES", 10)
    h = PromptHistory(tmp_path / "h.jsonl")
    for i in range(30):
        h.add(f"prompt {i}")
    loaded = h.load()  # the start after many appends trims the file
    assert loaded == [f"prompt {i}" for i in range(20, 30)]
    assert len(h.path.read_bytes().splitlines()) == 10


def test_the_file_stays_under_its_size_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "MAX_BYTES", 2000)
    h = PromptHistory(tmp_path / "h.jsonl")
    for i in range(100):
        h.add(f"{i:03d} " + "x" * 90)
    assert h.path.stat().st_size <= 2000
    assert h.load()[-1].startswith("099 ")


def test_a_huge_prompt_is_not_kept(tmp_path: Path) -> None:
    h = PromptHistory(tmp_path / "h.jsonl")
    assert not h.add("x" * (history.MAX_PROMPT_CHARS + 1))
    assert h.load() == []


def test_the_newest_prompt_is_found_after_a_long_one(tmp_path: Path) -> None:
    h = PromptHistory(tmp_path / "h.jsonl")
    h.add("y" * 90_000)
    h.add("short")
    assert not h.add("short")  # the newest, seen through the file's end only
    assert h.load() == ["y" * 90_000, "short"]


def test_merge_puts_the_sessions_own_missing_prompts_first() -> None:
    assert merge_history(["b", "c"], ["a", "b"]) == ["a", "b", "c"]


def test_lines_are_json_strings(tmp_path: Path) -> None:
    h = PromptHistory(tmp_path / "h.jsonl")
    h.add('say "hi"')
    assert [json.loads(line) for line in h.path.read_bytes().splitlines()] == ['say "hi"']
    assert os.access(h.path, os.R_OK)
