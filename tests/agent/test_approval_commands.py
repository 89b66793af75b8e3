"""Which commands read-only mode lets run, and which ones "always" must not cover by prefix."""

from __future__ import annotations

import pytest

from pitui.agent.approval import destructive_command, read_only_command


@pytest.mark.parametrize(
    ("command", "reading"),
    [
        ("git status", "git status"),
        ("git status --short", "git status"),
        ("ls -la src", "ls"),
        ("cat app.py | grep -n main", "cat"),
        ("find . -name '*.py' -type f", "find"),
        ("git log --oneline -5 && git diff HEAD~1", "git log"),
        ("git branch -a", "git branch"),
        ("git stash list", "git stash"),
        ("tree -L 2", "tree"),
        ("rg -n TODO", "rg"),
    ],
)
def test_commands_that_only_read(command: str, reading: str) -> None:
    assert read_only_command(command) == reading


@pytest.mark.parametrize(
    "command",
    [
        "rm x",
        "ls > out.txt",  # a redirection writes
        "cat < in && rm in",
        "echo $(rm x)",  # a substitution runs anything
        "echo `rm x`",
        "ls; rm x",
        "ls | xargs rm",
        "ls\nrm x",
        "find . -delete",
        "find . -exec rm {} ;",
        "find . -fprintf out %p",
        "git log --output=log.txt",
        "git -c core.pager=sh status",  # options before the subcommand
        "git branch new-branch",
        "git tag v1",
        "git stash",
        "git grep -Ovim main",  # opens a program
        "rg --pre=sh pattern",
        "tree -o listing.txt",
        "tree -ao listing.txt",
        "file -C -m magic",
        "FOO=1 ls",
        "(rm x)",
        "python -c 'print(1)'",
        "sed -i s/a/b/ f",
        "",
    ],
)
def test_commands_that_may_write_or_run_others(command: str) -> None:
    assert read_only_command(command) is None


@pytest.mark.parametrize(
    ("command", "destructive"),
    [
        ("rm -rf build", True),
        ("git reset --hard", True),
        ("chmod 777 x", True),
        ("sudo ls", True),
        ("ls | xargs cat", True),
        ("git status && git push", True),
        ("echo hi > f", True),  # a redirection: judged as a whole, never by prefix
        ("find . -name x", True),
        ("git status --short", False),
        ("pytest -x tests", False),
        ("npm test", False),
        ("touch a.txt", False),
    ],
)
def test_destructive_commands(command: str, destructive: bool) -> None:
    assert destructive_command(command) is destructive
