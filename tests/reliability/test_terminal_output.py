"""No escape sequence or control byte from a session file reaches the terminal through the CLI.

Every case of the hostile corpus goes through each text command (``tree`` in every filter,
``context``, ``sessions``, ``compact --dry-run``) and the JSON forms; the bytes written are
checked. Text output may hold only printable characters, tabs and newlines; JSON output must
parse to the file's exact values with no raw control characters either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from corpus import CASES, HOSTILE, write_corpus

from pitui.cli import main

REFUSED = {"no_header", "garbage", "binary", "whitespace_only", "header_missing_id"}
# C0 controls but tab and newline, DEL, C1, line/paragraph separators, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def _run(argv: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsysbinary.readouterr()
    return code, out.decode("utf-8"), err.decode("utf-8")


def _assert_safe(text: str, what: str) -> None:
    bad = UNSAFE.search(text)
    if bad is not None:
        near = text[max(0, bad.start() - 30) : bad.end() + 30]
        raise AssertionError(f"{what}: {bad.group(0)!r} reaches the terminal near {near!r}")


TEXT_COMMANDS = [
    ["tree"],
    ["tree", "--filter", "all"],
    ["tree", "--filter", "no-tools"],
    ["tree", "--filter", "labeled-only"],
    ["context"],
    ["compact", "--dry-run"],
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED))
def test_text_output_carries_no_control_bytes(
    name: str, corpus: dict[str, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = str(corpus[name])
    for command in TEXT_COMMANDS:
        argv = [command[0], path, *command[1:]]
        code, out, err = _run(argv, capsysbinary)
        assert code == 0, f"{name} {argv}: {err}"
        _assert_safe(out, f"{name}: pitui {' '.join(command)} stdout")
        _assert_safe(err, f"{name}: pitui {' '.join(command)} stderr")


@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED))
def test_json_output_is_exact_and_carries_no_raw_controls(
    name: str, corpus: dict[str, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = str(corpus[name])
    for argv in (["context", path, "--json"], ["tree", path, "--json"]):
        code, out, _ = _run(argv, capsysbinary)
        assert code == 0
        _assert_safe(out, f"{name}: {argv[0]} --json")
        json.loads(out)


def test_hostile_text_is_shown_inert_not_dropped(
    corpus: dict[str, Path], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The readable parts of hostile text still show; only the escapes go."""
    path = str(corpus["escapes_everywhere"])
    _, out, _ = _run(["tree", path, "--filter", "all"], capsysbinary)
    user_line = next(line for line in out.splitlines() if line.startswith("u1 "))
    assert "PWNED" not in user_line  # an OSC title is a command, not text: dropped whole
    assert "bell dcs RTL" in out
    assert "[bold]x[/]" in out  # markup is printed literally
    assert "\x1b" not in out and "\x07" not in out
    _, out, _ = _run(["context", path, "--json"], capsysbinary)
    data = json.loads(out)
    user = next(m for m in data["messages"] if m["role"] == "user")
    assert user["content"][0]["text"] == HOSTILE  # JSON keeps the exact value


def test_sessions_listing_is_sanitized(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "2025-01-01T00-00-00-000Z_esc.jsonl").write_bytes(CASES["escapes_everywhere"]())
    for argv in (
        ["--session-dir", str(folder), "sessions", "--all"],
        ["--session-dir", str(folder), "sessions", "--all", "--json"],
    ):
        code, out, err = _run(argv, capsysbinary)
        assert code == 0, err
        _assert_safe(out, " ".join(argv))
        _assert_safe(err, " ".join(argv))
    json.loads(out.splitlines()[0])
