"""Fuzzy path ranking and the project's file list (git-aware, .gitignore outside git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitui.agent import project_files
from pitui.agent.path_search import PathSearch, rank
from pitui.agent.project_files import ProjectFiles, ignored, parse_gitignore, walk_files

PATHS = [
    "pitui/ui/widgets/chat.py",
    "benchmarks/chat_bench.py",
    "tests/ui/test_chat.py",
    "chatter/notes/log.txt",
    "pitui/ui/widgets/prompt.py",
    "pitui/ui/widgets/prompt_history.py",
    "pitui/compaction/prompts.py",
    "pitui/session/store.py",
    "tests/session/test_store.py",
    "README.md",
    "docs/README.md",
    "pitui/agent/workspace.py",
    "pitui/ui/widgets/chat_prompt.py",
]


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("chat", "pitui/ui/widgets/chat.py"),  # the whole name, short path
        ("prompt", "pitui/ui/widgets/prompt.py"),
        ("ui/prompt", "pitui/ui/widgets/prompt.py"),  # folders, then the file's name
        ("wcp", "pitui/ui/widgets/chat_prompt.py"),  # segment starts
        ("sess store", "pitui/session/store.py"),  # spaces are ignored
        ("readme", "README.md"),  # case-insensitive, shortest
        ("PROMPT_HIS", "pitui/ui/widgets/prompt_history.py"),
    ],
)
def test_the_best_match_is_what_a_user_means(query: str, best: str) -> None:
    assert rank(query, PATHS, 3)[0] == best


def test_a_name_match_beats_a_folder_match() -> None:
    ranked = rank("chat", PATHS, 10)
    assert ranked.index("chatter/notes/log.txt") > ranked.index("tests/ui/test_chat.py")


def test_no_match_and_the_empty_query() -> None:
    assert rank("zzz", PATHS) == []
    assert rank("", PATHS, 2) == ["README.md", "docs/README.md"]  # shortest first


def test_typing_on_searches_the_previous_candidates_only() -> None:
    search = PathSearch(PATHS)
    search.search("pr")
    assert search.candidates("pro") == search.candidates("pro")
    assert set(search.search("prom", 50)) <= {PATHS[i] for i in search.candidates("pr")}


def test_a_huge_candidate_set_still_finds_the_exact_name() -> None:
    paths = [f"src/mod{i}/file{i}.py" for i in range(50_000)] + ["x/f.py"]
    assert rank("f.py", paths, 1) == ["x/f.py"]


def test_gitignore_rules() -> None:
    rules = parse_gitignore("*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/*.tmp\n\\#hash\n")
    assert ignored(rules, "a/b/debug.log", False)
    assert not ignored(rules, "keep.log", False)
    assert ignored(rules, "x/build", True) and not ignored(rules, "x/build", False)
    assert ignored(rules, "top.txt", False) and not ignored(rules, "sub/top.txt", False)
    assert ignored(rules, "docs/a/b/c.tmp", False) and ignored(rules, "docs/c.tmp", False)
    assert ignored(rules, "#hash", False)


def test_the_walk_stops_at_its_limit_and_the_cache_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(30):
        (tmp_path / f"f{i}.txt").write_text("x")
    assert len(walk_files(tmp_path, limit=10)) == 11  # one past the limit: there are more
    monkeypatch.setattr(project_files, "MAX_FILES", 10)
    files = ProjectFiles(tmp_path)
    assert len(files.paths()) == 10 and files.truncated


def test_the_list_is_kept_and_listed_again_when_old(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    files = ProjectFiles(tmp_path, max_age=3600)
    assert files.paths() == ["a.txt"]
    (tmp_path / "b.txt").write_text("x")
    assert files.paths() == ["a.txt"]  # kept
    files.max_age = 0
    assert sorted(files.paths()) == ["a.txt", "b.txt"]


def test_links_to_folders_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.txt").write_text("x")
    (tmp_path / "loop").symlink_to(tmp_path)
    assert walk_files(tmp_path) == ["loop", "real/a.txt"]
