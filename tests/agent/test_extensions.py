"""Extensions: hook runner semantics (pi's session_before_*), loading, and project trust."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pitui.agent.extensions import (
    BranchSummaryResult,
    Cancel,
    ExtensionAPI,
    Extensions,
    Summary,
    TreePreparation,
)
from pitui.compaction.file_ops import FileOps
from pitui.compaction.prepare import CompactionPreparation
from pitui.compaction.settings import CompactionSettings
from pitui.config import config_dir, load_settings
from pitui.config.settings import Settings
from pitui.config.trust import is_trusted, project_wants_code, trust, trust_file, untrust

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "keep_todos.py"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A private config dir, and no extension module left imported after the test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        origin = str(getattr(sys.modules[name], "__file__", None) or "")
        if origin.startswith(str(tmp_path)) or name.startswith("_pitui_extension_"):
            del sys.modules[name]


def preparation(messages: list[dict[str, Any]] | None = None) -> CompactionPreparation:
    messages = messages or [{"role": "user", "content": "hello"}]
    return CompactionPreparation(
        first_kept_entry_id="kept1",
        messages_to_summarize=messages,
        messages_to_summarize_ids=[f"e{i}" for i in range(len(messages))],
        turn_prefix_messages=[],
        turn_prefix_ids=[],
        is_split_turn=False,
        turn_start_entry_id=None,
        tokens_before=1234,
        previous_summary=None,
        file_ops=FileOps(),
        settings=CompactionSettings(),
    )


def tree_preparation() -> TreePreparation:
    return TreePreparation("t1", "leaf", "root", ["a", "b"], True, None)


def write_settings(path: Path, values: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values), encoding="utf-8")


def marker_module(path: Path, marker: Path, body: str = "") -> None:
    """An extension module that proves it ran by writing ``marker`` when imported."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('ran')\n"
        "def register(api):\n"
        "    api.on_before_compact(lambda p, r, w: None)\n" + body,
        encoding="utf-8",
    )


# --- runner semantics -----------------------------------------------------------------------


async def test_handlers_run_in_extension_then_registration_order() -> None:
    calls: list[str] = []
    ext = Extensions()

    def first(api: ExtensionAPI) -> None:
        api.on_before_compact(lambda p, r, w: calls.append("ext1-before1"))
        api.on_before_compact(lambda p, r, w: calls.append("ext1-before2"))

    def second(api: ExtensionAPI) -> None:
        api.on_before_compact(lambda p, r, w: calls.append("ext2-before1"))

    ext.add("one", first)
    ext.add("two", second)
    prep = preparation()

    seen: list[tuple[object, str, bool]] = []
    ext.add("three", lambda api: api.on_before_compact(lambda *a: seen.append(a)))
    # list.append returns None, so nobody has an opinion.
    assert await ext.run_before_compact(prep, "threshold", False) is None
    assert calls == ["ext1-before1", "ext1-before2", "ext2-before1"]
    assert seen == [(prep, "threshold", False)]
    assert ext.names == ["one", "two", "three"]
    assert ext.has_handlers("before_compact") and not ext.has_handlers("before_tree")


async def test_last_truthy_result_wins() -> None:
    ext = Extensions()
    ext.add("a", lambda api: api.on_before_compact(lambda p, r, w: Summary("first")))
    ext.add("b", lambda api: api.on_before_compact(lambda p, r, w: Summary("second")))
    ext.add("c", lambda api: api.on_before_compact(lambda p, r, w: None))
    result = await ext.run_before_compact(preparation(), "manual", False)
    assert result == Summary("second")

    tree = Extensions()
    tree.add("a", lambda api: api.on_before_tree(lambda p: BranchSummaryResult("one")))
    tree.add("b", lambda api: api.on_before_tree(lambda p: None))
    assert await tree.run_before_tree(tree_preparation()) == BranchSummaryResult("one")
    assert ext.errors == tree.errors == []


async def test_cancel_returns_immediately() -> None:
    later: list[str] = []
    ext = Extensions()
    ext.add("a", lambda api: api.on_before_compact(lambda p, r, w: Summary("x")))
    ext.add("b", lambda api: api.on_before_compact(lambda p, r, w: Cancel()))
    ext.add("c", lambda api: api.on_before_compact(lambda p, r, w: later.append("c")))
    assert await ext.run_before_compact(preparation(), "threshold", False) == Cancel()
    assert later == []

    tree = Extensions()
    tree.add("a", lambda api: api.on_before_tree(lambda p: Cancel()))
    tree.add("b", lambda api: api.on_before_tree(lambda p: later.append("tree")))
    assert await tree.run_before_tree(tree_preparation()) == Cancel()
    assert later == []


async def test_raising_handler_is_reported_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    def boom(*args: object) -> None:
        raise ValueError("boom")

    ext = Extensions()
    ext.add("good", lambda api: api.on_before_compact(lambda p, r, w: Summary("kept")))
    ext.add("bad", lambda api: api.on_before_compact(boom))
    ext.add("failed", lambda api: api.on_compact_failed(boom))
    with caplog.at_level(logging.WARNING, logger="pitui.agent.extensions"):
        assert await ext.run_before_compact(preparation(), "overflow", True) == Summary("kept")
        await ext.run_compact_failed("threshold", "network down")
    assert len(ext.errors) == 2
    assert "'bad'" in ext.errors[0] and "ValueError: boom" in ext.errors[0]
    assert "compact_failed" in ext.errors[1]
    assert all(e.endswith("it was ignored.") and "\n" not in e for e in ext.errors)
    assert [r.getMessage() for r in caplog.records] == ext.errors


async def test_unexpected_result_is_reported_and_ignored() -> None:
    ext = Extensions()
    ext.add("a", lambda api: api.on_before_compact(lambda p, r, w: Summary("ok")))
    ext.add("b", lambda api: api.on_before_compact(lambda p, r, w: "a summary?"))
    ext.add("c", lambda api: api.on_before_compact(lambda p, r, w: BranchSummaryResult("x")))
    ext.add("d", lambda api: api.on_before_compact(lambda p, r, w: ""))  # falsy: no opinion
    assert await ext.run_before_compact(preparation(), "manual", False) == Summary("ok")
    assert len(ext.errors) == 2
    assert "returned str instead of None or Cancel or Summary" in ext.errors[0]


async def test_a_look_alike_result_class_is_refused_and_told_to_import_ours() -> None:
    class Cancel:  # an extension's own class that only shares the name
        pass

    class Summary:
        summary = "from a look-alike"

    ext = Extensions()
    ext.add("own", lambda api: api.on_before_compact(lambda p, r, w: Cancel()))
    ext.add("own2", lambda api: api.on_before_compact(lambda p, r, w: Summary()))
    ext.add("own3", lambda api: api.on_before_tree(lambda p: Cancel()))
    assert await ext.run_before_compact(preparation(), "manual", False) is None
    assert await ext.run_before_tree(tree_preparation()) is None
    assert len(ext.errors) == 3
    where = f"{__name__}.test_a_look_alike_result_class_is_refused_and_told_to_import_ours"
    assert ext.errors[0] == (
        f"Extension 'own' before_compact handler returned its own Cancel class "
        f"({where}.<locals>.Cancel), not pitui's: import Cancel from pitui.agent.extensions; "
        "it was ignored."
    )
    assert "its own Summary class" in ext.errors[1] and "import Summary from" in ext.errors[1]
    assert "before_tree handler returned its own Cancel class" in ext.errors[2]


async def test_async_handlers() -> None:
    failures: list[tuple[str, str]] = []
    ext = Extensions()

    def register(api: ExtensionAPI) -> None:
        @api.on_before_compact
        async def summarize(p: CompactionPreparation, reason: str, retry: bool) -> Summary:
            await asyncio.sleep(0)
            return Summary(f"async {reason}", tokens_before=999)

        @api.on_compact_failed
        async def failed(reason: str, error: str) -> None:
            await asyncio.sleep(0)
            failures.append((reason, error))

        @api.on_before_tree
        async def tree(p: TreePreparation) -> BranchSummaryResult:
            return BranchSummaryResult(f"tree to {p.target_id}", {"k": 1})

        @api.on_before_tree
        async def raises(p: TreePreparation) -> None:
            raise RuntimeError("async failure")

    ext.add("async", register)
    result = await ext.run_before_compact(preparation(), "threshold", False)
    assert result == Summary("async threshold", tokens_before=999)
    await ext.run_compact_failed("overflow", "too long")
    assert failures == [("overflow", "too long")]
    assert await ext.run_before_tree(tree_preparation()) == BranchSummaryResult(
        "tree to t1", {"k": 1}
    )
    assert len(ext.errors) == 1 and "RuntimeError: async failure" in ext.errors[0]


def test_summary_append_args_fall_back_to_preparation() -> None:
    prep = preparation()
    assert Summary("s").append_args(prep) == {
        "summary": "s",
        "first_kept_entry_id": "kept1",
        "tokens_before": 1234,
        "details": None,
        "from_hook": True,
    }
    args = Summary("s", "other", 999, {"a": 1}).append_args(prep)
    assert (args["first_kept_entry_id"], args["tokens_before"], args["details"]) == (
        "other",
        999,
        {"a": 1},
    )


# --- loading --------------------------------------------------------------------------------


def test_user_extensions_load_from_global_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mods = tmp_path / "mods"
    marker_module(mods / "user_ext_by_name.py", tmp_path / "by-name.ran")
    marker_module(config_dir() / "ext" / "by_path.py", tmp_path / "by-path.ran")
    monkeypatch.syspath_prepend(str(mods))
    write_settings(
        config_dir() / "settings.json",
        {"extensions": ["user_ext_by_name", "ext/by_path.py", "user_ext_by_name"]},
    )
    project = tmp_path / "project"
    project.mkdir()

    ext = Extensions()
    warnings = ext.load(project, load_settings(str(project)), trusted=False)
    assert warnings == []
    assert ext.names == ["user_ext_by_name", "by_path"]  # the duplicate loads once
    assert (tmp_path / "by-name.ran").exists() and (tmp_path / "by-path.ran").exists()


def test_extensions_given_in_settings_by_the_caller_are_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker_module(tmp_path / "mods" / "caller_ext.py", tmp_path / "caller.ran")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    ext = Extensions()
    assert (
        ext.load(tmp_path, Settings.from_dict({"extensions": ["caller_ext"]}), trusted=False) == []
    )
    assert ext.names == ["caller_ext"]


def test_project_extensions_need_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    folder = project / ".pitui" / "extensions"
    marker_module(folder / "b_second.py", tmp_path / "b.ran")
    marker_module(folder / "a_first.py", tmp_path / "a.ran")
    marker_module(tmp_path / "mods" / "proj_named.py", tmp_path / "named.ran")
    marker_module(tmp_path / "mods" / "user_mod.py", tmp_path / "user.ran")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    write_settings(config_dir() / "settings.json", {"extensions": ["user_mod"]})
    write_settings(project / ".pitui" / "settings.json", {"extensions": ["proj_named"]})
    ran = [tmp_path / n for n in ("a.ran", "b.ran", "named.ran")]

    assert project_wants_code(project)
    assert not is_trusted(project)
    ext = Extensions()
    warnings = ext.load(project, load_settings(str(project)), trusted=is_trusted(project))
    assert ext.names == ["user_mod"]
    assert not any(p.exists() for p in ran)  # the project's code never ran
    assert len(warnings) == 1 and "not trusted" in warnings[0]

    trust(project)
    ext = Extensions()
    warnings = ext.load(project, load_settings(str(project)), trusted=is_trusted(project))
    assert warnings == []
    assert ext.names == ["user_mod", "proj_named", "a_first", "b_second"]
    assert all(p.exists() for p in ran)


def test_trust_is_remembered_per_path(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    link = tmp_path / "link"
    link.symlink_to(a)
    assert not trust_file().exists() and not is_trusted(a)

    trust(a)
    assert trust_file() == tmp_path / "config" / "pitui" / "trusted-projects.json"
    assert is_trusted(a) and is_trusted(link) and is_trusted(tmp_path / "a" / ".." / "a")
    assert not is_trusted(b) and not is_trusted(a / "sub")
    data = json.loads(trust_file().read_text(encoding="utf-8"))
    assert list(data) == [str(a.resolve())]
    assert stat.S_IMODE(trust_file().stat().st_mode) == 0o600
    assert [p.name for p in trust_file().parent.iterdir()] == ["trusted-projects.json"]

    trust(b)
    untrust(a)
    assert not is_trusted(a) and is_trusted(b)

    trust_file().write_text("{not json", encoding="utf-8")
    assert not is_trusted(b)


def test_project_wants_code(tmp_path: Path) -> None:
    assert not project_wants_code(tmp_path)
    write_settings(tmp_path / ".pitui" / "settings.json", {"extensions": []})
    assert not project_wants_code(tmp_path)
    write_settings(tmp_path / ".pitui" / "settings.json", {"extensions": ["x"]})
    assert project_wants_code(tmp_path)
    other = tmp_path / "other"
    (other / ".pitui" / "extensions").mkdir(parents=True)
    assert not project_wants_code(other)
    (other / ".pitui" / "extensions" / "x.py").write_text("", encoding="utf-8")
    assert project_wants_code(other)


def test_broken_extensions_give_one_warning_each(tmp_path: Path) -> None:
    folder = tmp_path / ".pitui" / "extensions"
    folder.mkdir(parents=True)
    (folder / "a_syntax.py").write_text("def register(api:\n", encoding="utf-8")
    (folder / "b_no_register.py").write_text("x = 1\n", encoding="utf-8")
    (folder / "c_raises.py").write_text(
        "def register(api):\n    api.on_before_tree(print)\n    raise KeyError('nope')\n",
        encoding="utf-8",
    )
    (folder / "d_import_fails.py").write_text("import no_such_module_xyz\n", encoding="utf-8")
    (folder / "e_exits.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    marker_module(folder / "z_good.py", tmp_path / "good.ran")
    write_settings(
        tmp_path / ".pitui" / "settings.json", {"extensions": ["no_such_ext_module", "gone.py"]}
    )
    ext = Extensions()
    warnings = ext.load(tmp_path, load_settings(str(tmp_path)), trusted=True)
    assert ext.names == ["z_good"]
    assert not ext.has_handlers("before_tree")  # c_raises registered nothing in the end
    assert len(warnings) == 7
    for warning in warnings:
        assert "\n" not in warning and warning.endswith(".")
    assert "'no_such_ext_module'" in warnings[0] and "ModuleNotFoundError" in warnings[0]
    assert "FileNotFoundError" in warnings[1]
    assert "SyntaxError" in warnings[2]
    assert "has no register(api) function" in warnings[3]
    assert "failed in register (KeyError: 'nope')" in warnings[4]
    assert "no_such_module_xyz" in warnings[5]
    assert "SystemExit" in warnings[6]


def test_bad_extensions_setting(tmp_path: Path) -> None:
    write_settings(config_dir() / "settings.json", {"extensions": "keep_todos"})
    write_settings(tmp_path / ".pitui" / "settings.json", {"extensions": [3]})
    warnings = Extensions().load(tmp_path, load_settings(str(tmp_path)), trusted=True)
    assert len(warnings) == 2
    assert "must be a list of strings" in warnings[0]
    assert "Ignoring extension entry 3" in warnings[1]


# --- the example ----------------------------------------------------------------------------


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("keep_todos_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_loads_from_settings(tmp_path: Path) -> None:
    write_settings(config_dir() / "settings.json", {"extensions": [str(EXAMPLE)]})
    ext = Extensions()
    assert ext.load(tmp_path, load_settings(str(tmp_path)), trusted=False) == []
    assert ext.names == ["keep_todos"]
    assert ext.has_handlers("before_compact") and ext.has_handlers("before_tree")


async def test_example_hooks() -> None:
    module = load_example()
    ext = Extensions()
    ext.add("keep_todos", module.register)

    plain = preparation([{"role": "user", "content": "fix the parser"}])
    assert await ext.run_before_compact(plain, "threshold", False) is None

    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Refactor the loader\nTODO: add tests\nthanks"},
        {"role": "assistant", "content": [{"type": "text", "text": "TODO: not the user's"}]},
        {"role": "user", "content": [{"type": "text", "text": "  TODO update the docs"}]},
    ]
    result = await ext.run_before_compact(preparation(messages), "threshold", False)
    assert isinstance(result, Summary)
    assert result.summary.endswith("## Open TODOs\n- TODO: add tests\n- TODO update the docs")
    assert "- Refactor the loader" in result.summary
    assert result.details == {"todos": ["TODO: add tests", "TODO update the docs"]}
    assert result.append_args(preparation(messages))["from_hook"] is True

    assert await ext.run_before_tree(tree_preparation()) is None
    assert await ext.run_before_tree(tree_preparation()) is None
    assert module.calls == {"before_tree": 2}
    assert ext.errors == []
