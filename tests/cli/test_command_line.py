"""``pitui [options]`` is parsed without the subcommands' modules, and nothing a user types
comes out differently for it: the same values, the same help, the same errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pitui.cli import build_parser, parse_command_line

PLAIN = [
    [],
    ["--model", "openai/gpt-5", "--api-base", "http://127.0.0.1:9"],
    ["--session", "abc", "--session-dir", "/tmp/x"],
    ["-c", "--approve", "ask"],
    ["-r"],
    ["--demo"],
    ["--no-session", "--cwd", "."],
    ["-p", "hello world", "--json"],
    ["-p", "-"],
    ["--thinking", "high", "--appr", "ask"],
]
"""Command lines without a command (the TUI and print mode)."""

OTHERS = [
    ["tree", "abc"],
    ["context", "abc"],
    ["--session-dir", "/tmp/x", "sessions"],
    ["compact", "--dry-run", "abc"],
    ["--model", "x", "export", "abc"],
]
"""Command lines with a command."""


@pytest.mark.parametrize("argv", PLAIN + OTHERS, ids=lambda a: " ".join(a) or "(none)")
def test_every_command_line_parses_to_what_the_full_parser_gives(argv: list[str]) -> None:
    assert vars(parse_command_line(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("argv", PLAIN, ids=lambda a: " ".join(a) or "(none)")
def test_a_command_line_without_a_command_needs_only_the_options(argv: list[str]) -> None:
    args, rest = build_parser(commands=False).parse_known_args(argv)
    assert (args.command, rest) == (None, [])
    assert vars(args) == vars(build_parser().parse_args(argv))


@pytest.mark.slow
def test_a_plain_command_line_is_parsed_without_the_commands_modules() -> None:
    code = (
        "import sys; from pitui.cli import parse_command_line; "
        "a = parse_command_line(['--model', 'openai/x', '-c']); "
        "print(a.command, a.model, sorted(m for m in sys.modules if m.endswith(('_cmd', '_cmds'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "None openai/x []"


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pitui", *argv], capture_output=True, text=True, timeout=60
    )


@pytest.mark.slow
def test_help_lists_the_commands() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "COMMAND" in result.stdout
    for name in ("tree", "context", "compact", "checkpoints"):
        assert name in result.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["exprot"], "invalid choice: 'exprot'"),
        (["--approve", "sometimes"], "invalid choice: 'sometimes'"),
        (["--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["-p", "hi", "stray"], "invalid choice: 'stray'"),
    ],
)
@pytest.mark.slow
def test_a_mistake_gets_the_full_parsers_usage_and_message(argv: list[str], message: str) -> None:
    result = run(*argv)
    assert result.returncode == 2
    assert message in result.stderr
    assert "COMMAND" in result.stderr  # the usage line of the parser with the commands


@pytest.mark.slow
def test_version_needs_no_command() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("pitui ")


@pytest.mark.slow
def test_help_says_a_command_is_optional_and_what_api_base_is() -> None:
    out = run("--help").stdout
    usage = out.split("\n\n")[0]
    assert "pitui [options]" in usage and "the TUI (no COMMAND)" in usage
    assert "pitui -p PROMPT [options]" in usage
    assert "commands (optional):" in out
    words = " ".join(out.split())
    assert "base URL of the model's API, for any provider" in words
    assert "Without a COMMAND, pitui opens the TUI" in words


@pytest.mark.slow
def test_trust_help_names_every_key_an_untrusted_project_may_not_set() -> None:
    from pitui.config.settings import KNOWN_KEYS, PROJECT_KEYS

    words = " ".join(run("trust", "--help").stdout.split())
    may_set, ignored = words.split(" are ignored")[0].rsplit("), while ", 1)
    assert set(ignored.split(", ")) == KNOWN_KEYS - PROJECT_KEYS
    for key in PROJECT_KEYS:
        assert key in may_set, key
