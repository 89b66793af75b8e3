"""Pilot tests for checkpoints in the TUI: the restore prompt (tree browser, edit and resubmit,
/fork), redo, the tree's marker, the Files tab, and the ``ask`` approval dialog."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import fixed_clock
from support.folders import picture, write
from support.llm_server import ScriptedLLMServer, text, tool_call
from support.screens import SIZE, screen_up, wait_for
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import OptionList, RadioSet, Static

from pitui.agent.approval import ApprovalRequest, build_request
from pitui.agent.session import AgentSession
from pitui.agent.workspace import MovePreview, Workspace
from pitui.checkpoint.settings import read_workspace_settings
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.session import ids as session_ids
from pitui.session.shapes import APPROVAL_TYPE
from pitui.ui.app import PituiApp
from pitui.ui.key_routing import TYPING_PAUSE
from pitui.ui.screens.approval_prompt import ApprovalPrompt
from pitui.ui.screens.fork_picker import ForkPickerScreen
from pitui.ui.screens.main import MainScreen
from pitui.ui.screens.restore_prompt import RestoreChoice, RestorePrompt
from pitui.ui.screens.summary_prompt import SummaryChoice, SummaryOffer
from pitui.ui.screens.tree_browser import TreeBrowserScreen
from pitui.ui.widgets.files_tab import FilesTab
from pitui.ui.widgets.files_view import FilesView
from pitui.ui.widgets.inspectors import DetailsPane
from pitui.ui.widgets.prompt import PromptEditor
from pitui.ui.widgets.session_tree import SessionTree

HOSTILE = "[bold]x[/] [x[0]] \x1b[31mred\x1b]52;c;Zm9v\x07"


def message(role: str, body: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": body}], "timestamp": 1, **extra}


def workspace_for(project: Path, values: dict[str, Any] | None = None, **kw: Any) -> Workspace:
    return Workspace(read_workspace_settings(Settings.from_dict(values), **kw), project)


async def build_session(tmp_path: Path, tail: str = "") -> tuple[Path, Path, dict[str, str]]:
    """Two runs on a project: the first refactors app.py, the second adds docs (``tail``
    makes the messages longer)."""
    project = tmp_path / "project"
    write(project, {"app.py": "def main():\n    return 1\n", "util.py": "X = 1\n"})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    workspace = workspace_for(project)
    workspace.attach_store(store)
    ids: dict[str, str] = {}

    async def run(n: int, change: Callable[[], None]) -> None:
        ids[f"u{n}"] = store.append_message(message("user", f"step {n}{tail}"))
        call = {"type": "toolCall", "id": f"c{n}", "name": "bash", "arguments": {"command": "…"}}
        ids[f"a{n}"] = store.append_message(
            {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}
        )
        await workspace.checkpoint("before-change")
        change()
        store.append_message(message("toolResult", "ok", toolCallId=f"c{n}", toolName="bash"))
        ids[f"done{n}"] = store.append_message(
            message("assistant", f"Done {n}.{tail}", stopReason="stop")
        )
        ref = await workspace.checkpoint("after-run")
        assert ref is not None
        ids[f"post{n}"] = ref.entry_id

    def refactor() -> None:
        write(project, {"app.py": "def main():\n    return helper()\n", "helpers.py": "h\n"})
        (project / "util.py").unlink()

    def docs() -> None:
        write(project, {"README.md": "# Docs\n", "app.py": "def main():\n    return helper(2)\n"})

    async def both() -> None:
        await run(1, refactor)
        await run(2, docs)

    await both()
    assert store.path is not None
    path = store.path
    store.close()
    return path, project, ids


def make_app(
    path: Path, project: Path, settings: dict[str, Any] | None = None, **kw: Any
) -> PituiApp:
    merged = Settings.from_dict(
        {"ui": {"cursorBlink": False}, "branchSummary": {"skipPrompt": True}, **(settings or {})}
    )
    store = SessionStore.open(path)

    def factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s,
            cwd=project,
            model="openai/test-model",
            api_base=kw.get("api_base", "http://127.0.0.1:9/v1"),
            settings=merged,
            workspace=Workspace(
                read_workspace_settings(merged, approve=kw.get("approve")), project
            ),
        )

    return PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=project)


async def open_tree(pilot: Pilot[Any]) -> SessionTree:
    await pilot.press("ctrl+t")
    await wait_for(pilot, lambda: screen_up(pilot.app, TreeBrowserScreen))
    await pilot.pause()
    return pilot.app.screen.query_one(SessionTree)


async def go_to(pilot: Pilot[Any], tree: SessionTree, entry_id: str) -> None:
    await pilot.press("home")
    line = tree.line_of(entry_id)
    assert line is not None, entry_id
    await pilot.press(*["down"] * line)
    assert tree.cursor_entry_id == entry_id


def listed_files(prompt: RestorePrompt) -> list[str]:
    options = prompt.query_one("#files-list", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


# ------------------------------------------------------------------ restore from the tree


@pytest.mark.slow
async def test_edit_and_resubmit_restores_the_files_and_going_forward_is_one_more_move(
    tmp_path: Path,
) -> None:
    path, project, ids = await build_session(tmp_path)
    after_both = picture(project)
    app = make_app(path, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        # The runs' rows carry the number of files they changed.
        assert tree.row_text(tree.line_of(ids["done1"]) or 0).endswith("✎ 3 files")
        # The leaf is the run's checkpoint entry: bookkeeping, so the reply's row is the leaf's.
        done2 = tree.row_text(tree.line_of(ids["done2"]) or 0)
        assert done2.endswith("✎ 2 files  ← leaf")
        await go_to(pilot, tree, ids["u2"])  # edit and resubmit "step 2"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        prompt = app.screen
        assert isinstance(prompt, RestorePrompt)
        assert listed_files(prompt) == ["D README.md  +0 -1", "M app.py  +1 -1"]
        diff = str(prompt.query_one("#files-diff-text", Static).render())
        assert "README.md (deleted)" in diff and "-# Docs" in diff
        await pilot.press("down")
        diff = str(prompt.query_one("#files-diff-text", Static).render())
        assert "-    return helper(2)" in diff and "+    return helper()" in diff
        await pilot.press("r")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        await wait_for(pilot, lambda: not (project / "README.md").exists())
        assert (project / "app.py").read_text() == "def main():\n    return helper()\n"
        assert app.store.leaf_id == ids["post1"]
        # The editor is filled once the chat has followed the move (a moment later under load).
        await wait_for(pilot, lambda: app.screen.query_one(PromptEditor).text == "step 2")
        # Redo: back to the end of run 2.
        tree = await open_tree(pilot)
        await go_to(pilot, tree, ids["done2"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.store.leaf_id == ids["done2"])
        await wait_for(pilot, lambda: picture(project) == after_both)


@pytest.mark.slow
async def test_conversation_only_and_cancel_leave_the_files(tmp_path: Path) -> None:
    path, project, ids = await build_session(tmp_path)
    before = picture(project)
    app = make_app(path, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, ids["done1"])  # the end of run 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen_up(app, TreeBrowserScreen))
        await pilot.pause(0.1)
        assert app.store.leaf_id == ids["post2"] and picture(project) == before
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        await pilot.press("c")
        await wait_for(pilot, lambda: app.store.leaf_id == ids["done1"])
        await pilot.pause(0.2)
        assert picture(project) == before


@pytest.mark.slow
async def test_one_dialog_asks_about_the_summary_and_the_files(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """Leaving a branch whose files differ: one dialog, with the summary choice above the files
    (no second dialog); its count is of the entries the tree shows (not the checkpoints)."""
    path, project, ids = await build_session(tmp_path)
    llm.script(text("They added docs."))
    app = make_app(
        path, project, {"branchSummary": {"skipPrompt": False}}, api_base=f"{llm.url}/v1"
    )
    async with app.run_test(size=SIZE) as pilot:
        shown: list[str] = []
        app.screen_change_signal.subscribe(
            app, lambda screen: shown.append(type(screen).__name__), immediate=True
        )
        tree = await open_tree(pilot)
        # Run 2 is left: its prompt, the call (no text: not a row), the result, the reply and
        # the checkpoint (bookkeeping): the tree shows 3 of them.
        await go_to(pilot, tree, ids["done1"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        prompt = app.screen
        assert isinstance(prompt, RestorePrompt)
        title = str(prompt.query_one("#restore-title", Static).render())
        assert title.startswith("Moving here leaves a branch of 3 entries. The files on disk")
        # The keyboard: Tab to the summary choice, → to "Summarize", Space; then r.
        for _ in range(4):
            if isinstance(app.focused, RadioSet):
                break
            await pilot.press("tab")
        assert isinstance(app.focused, RadioSet)
        await pilot.press("right", "space")
        assert prompt.summary_choice() == SummaryChoice(True)
        await pilot.press("r")
        await wait_for(
            pilot, lambda: app.store.leaf is not None and app.store.leaf.type == "branch_summary"
        )
        await wait_for(pilot, lambda: not (project / "README.md").exists())
        summary = app.store.get(app.store.leaf_id or "")
        assert summary["parentId"] == ids["done1"]
        assert "They added docs." in summary["summary"]
        assert shown.count("RestorePrompt") == 1 and "SummaryPrompt" not in shown


@pytest.mark.slow
async def test_outside_edits_need_an_explicit_second_answer(tmp_path: Path) -> None:
    path, project, ids = await build_session(tmp_path)
    write(project, {"app.py": "my own edit\n"})
    app = make_app(path, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, ids["done1"])
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        prompt = app.screen
        assert "⚠ changed outside pitui" in " ".join(listed_files(prompt))  # type: ignore[arg-type]
        await pilot.press("r")

        def title() -> str:
            return str(prompt.query_one("#restore-title", Static).render())

        await wait_for(pilot, lambda: "would be overwritten" in title())
        assert app.screen is prompt  # asked again, explicitly
        assert "would be overwritten: app.py" in title()
        await pilot.press("k")  # keep my edit, restore the rest
        await wait_for(pilot, lambda: app.store.leaf_id == ids["done1"])
        await wait_for(pilot, lambda: not (project / "README.md").exists())
        assert (project / "app.py").read_text() == "my own edit\n"


@pytest.mark.slow
async def test_fork_offers_the_files_of_the_new_starting_point(tmp_path: Path) -> None:
    path, project, _ = await build_session(tmp_path)
    app = make_app(path, project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/fork", "enter")
        await wait_for(pilot, lambda: screen_up(app, ForkPickerScreen))
        await pilot.press("down", "enter")  # "step 2": the new session starts after run 1
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.store.path != path)
        await wait_for(pilot, lambda: not (project / "README.md").exists())
        assert (project / "helpers.py").exists()
        assert app.screen.query_one(PromptEditor).text == "step 2"


@pytest.mark.slow
async def test_files_tab_shows_the_run_and_the_disk(tmp_path: Path) -> None:
    path, project, ids = await build_session(tmp_path)
    app = make_app(path, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, ids["done1"])
        details = app.screen.query_one(DetailsPane)
        details.set_tab("files")
        files = app.screen.query_one(FilesTab)
        view = files.query_one(FilesView)
        await wait_for(
            pilot,
            lambda: [d.change.path for d in view.diffs] == ["app.py", "helpers.py", "util.py"],
        )
        head = str(files.query_one("#files-head", Static).render())
        assert "Changed by this run: 1 added, 1 modified, 1 deleted" in head
        files.set_view("disk")
        await wait_for(
            pilot, lambda: [d.change.path for d in view.diffs] == ["README.md", "app.py"]
        )
        assert "Restoring here would change" in str(files.query_one("#files-head", Static).render())


# ------------------------------------------------------------------ approvals in the app


@pytest.mark.slow
async def test_ask_mode_shows_the_command_and_runs_it_after_yes(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    path, project, _ = await build_session(tmp_path)
    llm.script(
        tool_call("bash", {"command": "echo hi > out.txt"}),
        tool_call("bash", {"command": "rm app.py"}),
        text("Done."),
    )
    app = make_app(path, project, approve="ask", api_base=f"{llm.url}/v1")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: screen_up(app, ApprovalPrompt))
        shown = str(app.screen.query_one("#approval-preview-text", Static).render())
        assert shown == "$ echo hi > out.txt"
        await asyncio.sleep(TYPING_PAUSE)  # keys typed on after "go" never answer the dialog
        await pilot.press("y")
        await wait_for(pilot, lambda: screen_up(app, ApprovalPrompt))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        assert (project / "out.txt").read_text() == "hi\n"
        assert (project / "app.py").exists()
        decisions = [
            app.store.data(n)["data"]
            for n in app.store.path_to()
            if n.type == "custom" and app.store.data(n).get("customType") == APPROVAL_TYPE
        ]
        assert [(d["subject"], d["decision"], d["by"]) for d in decisions] == [
            ("echo hi > out.txt", "allow", "user"),
            ("rm app.py", "deny", "user"),
        ]


# ------------------------------------------------------------------ the screens alone


class Harness(App[None]):
    """An empty app showing one screen (deterministic snapshots, no session details)."""

    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.result: Any = "unset"
        self._screen = screen

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        def done(value: Any) -> None:
            self.result = value

        self.push_screen(self._screen, done)


async def make_preview(
    tmp_path: Path, *, outside: bool = False, hostile: bool = False
) -> MovePreview:
    project = tmp_path / "p"
    write(project, {"src/app.py": "a\nb\nc\n", "old.txt": "old\n", "run.sh": "#!/bin/sh\n"})
    store = SessionStore.create(tmp_path / "s", str(project))
    workspace = workspace_for(project)
    workspace.attach_store(store)

    async def make() -> MovePreview:
        store.append_message(message("user", "x"))
        target = await workspace.checkpoint("before-change")
        write(project, {"src/app.py": "a\nB\nc\n", "new.md": "new\n"})
        if hostile:
            write(project, {HOSTILE.replace("/", "_"): HOSTILE})
        (project / "old.txt").unlink()
        (project / "run.sh").chmod(0o755)
        store.append_message(message("assistant", "done", stopReason="stop"))
        await workspace.checkpoint("after-run")
        if outside:
            write(project, {"src/app.py": "mine\n"})
        assert target is not None
        return await workspace.preview_move(target.parent_id)

    return await make()


def preview_for(tmp_path: Path, **kw: Any) -> MovePreview:
    return asyncio.run(make_preview(tmp_path, **kw))


@pytest.mark.slow
async def test_restore_prompt_answers(tmp_path: Path) -> None:
    async def scenario(keys: list[str], outside: bool, sub: str) -> Any:
        preview = await make_preview(tmp_path / sub, outside=outside)
        harness = Harness(RestorePrompt(preview))
        async with harness.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: screen_up(harness, RestorePrompt))
            await pilot.press(*keys)
            await pilot.pause()
            return harness.result

    assert await scenario(["r"], False, "a") == RestoreChoice(True, "refuse")
    assert await scenario(["c"], False, "b") == RestoreChoice(False)
    assert await scenario(["escape"], False, "c") is None
    assert await scenario(["r", "o"], True, "d") == RestoreChoice(True, "overwrite")
    assert await scenario(["r", "escape", "c"], True, "e") == RestoreChoice(False)


@pytest.mark.slow
async def test_untrusted_names_and_contents_stay_literal(tmp_path: Path) -> None:
    preview = await make_preview(tmp_path, hostile=True)
    harness = Harness(RestorePrompt(preview))
    async with harness.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: screen_up(harness, RestorePrompt))
        prompt = harness.screen
        names = listed_files(prompt)  # type: ignore[arg-type]
        await pilot.press("home")
        shown = str(prompt.query_one("#files-diff-text", Static).render())
    hostile_row = next(n for n in names if "[bold]" in n)
    assert "\x1b" not in hostile_row and "\x07" not in hostile_row
    assert "[bold]x[_] [x[0]]" in hostile_row
    assert "\x1b" not in shown


@pytest.mark.parametrize(
    ("keys", "answer"),
    [
        (["y"], "yes"),
        (["n"], "no"),
        (["escape"], "no"),
        (["alt+p"], "prefix"),
        (["alt+s"], "session"),
        (["down", "down", "enter"], "prefix"),  # moved there with the arrows: deliberate
        # "always" takes a deliberate key: the letters of text choose nothing
        (["p", "s", "a", "escape"], "no"),
    ],
)
async def test_approval_prompt_answers(tmp_path: Path, keys: list[str], answer: str) -> None:
    request = build_request(
        "bash", "call_1", {"command": "git status --short"}, tmp_path, ("git status --short",)
    )
    harness = Harness(ApprovalPrompt(request))
    async with harness.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: screen_up(harness, ApprovalPrompt))
        await pilot.press(*keys)
        await pilot.pause()
    assert harness.result == answer


def approval_request(tmp_path: Path) -> ApprovalRequest:
    write(tmp_path, {"src/app.py": "def main():\n    return 1\n"})
    from pitui.agent.approval import preview_lines

    args = {"path": "src/app.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}
    return build_request("edit", "call_1", args, tmp_path, preview_lines("edit", args, tmp_path))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_approval_prompt_snapshot(
    snap_compare: Callable[..., bool], tmp_path: Path, size: tuple[int, int]
) -> None:
    assert snap_compare(Harness(ApprovalPrompt(approval_request(tmp_path))), terminal_size=size)


@pytest.mark.slow
def test_restore_prompt_snapshot(snap_compare: Callable[..., bool], tmp_path: Path) -> None:
    harness = Harness(RestorePrompt(preview_for(tmp_path, outside=True)))

    async def settle(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, lambda: screen_up(harness, RestorePrompt))
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(harness, terminal_size=SIZE, run_before=settle)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.slow
def test_move_prompt_with_the_summary_choice_snapshot(
    snap_compare: Callable[..., bool], tmp_path: Path, size: tuple[int, int]
) -> None:
    """A move in the tree that leaves a branch and finds other files: one dialog."""
    preview = preview_for(tmp_path)
    harness = Harness(RestorePrompt(preview, summary=SummaryOffer(3), cursor_blink=False))

    async def settle(pilot: Pilot[Any]) -> None:
        await wait_for(pilot, lambda: screen_up(harness, RestorePrompt))
        await pilot.pause()

    assert snap_compare(harness, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.slow
def test_files_tab_snapshot(
    snap_compare: Callable[..., bool],
    tmp_path: Path,
    size: tuple[int, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Files tab of the tree's details pane: the diff gets the pane's width (under the
    list, lines not wrapped), and the rows' ✎ counts stay in view on long rows."""
    counter = iter(range(1, 10_000))  # entry ids the same in every run (the head names one)
    fake = types.SimpleNamespace(token_hex=lambda n: f"{next(counter):0{2 * n}x}")
    monkeypatch.setattr(session_ids, "secrets", fake)
    tail = " The refactor moved the helpers out and removed the old utility module for good."
    path, project, ids = asyncio.run(build_session(tmp_path, tail))
    app = make_app(path, project)

    async def files_tab(pilot: Pilot[Any]) -> None:
        tree = await open_tree(pilot)
        details = app.screen.query_one(DetailsPane)
        if not details.display:
            await pilot.press("i")
        await go_to(pilot, tree, ids["done1"])
        details.set_tab("files")
        view = app.screen.query_one(FilesTab).query_one(FilesView)
        await wait_for(pilot, lambda: len(view.diffs) == 3)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=files_tab)


@pytest.mark.slow
async def test_edit_and_resubmit_without_file_changes_asks_nothing_and_runs(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    project = tmp_path / "project"
    write(project, {"a.txt": "a"})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    assert store.path is not None
    llm.script(text("First answer."), text("Second answer."))
    merged = Settings.from_dict({"ui": {"cursorBlink": False}})

    def factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s,
            cwd=project,
            model="openai/test-model",
            api_base=f"{llm.url}/v1",
            settings=merged,
            workspace=Workspace(read_workspace_settings(merged), project),
        )

    app = PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        tree = await open_tree(pilot)
        user = next(n.id for n in app.store.path_to() if n.role == "user")
        await go_to(pilot, tree, user)
        await pilot.press("enter")
        from pitui.ui.screens.summary_prompt import SummaryPrompt

        await wait_for(pilot, lambda: screen_up(app, SummaryPrompt))
        await pilot.press("enter")  # no summary
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        editor = app.screen.query_one(PromptEditor)
        await wait_for(pilot, lambda: editor.text == "hello")
        await pilot.press(*" again", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 2)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        texts = [m for m in app.store.project().messages if m["role"] == "assistant"]
        assert texts[-1]["content"][0]["text"] == "Second answer."


@pytest.mark.slow
async def test_edit_and_resubmit_of_the_first_prompt_restores_its_files(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """The README's walk-through on a new session: the first prompt's run changes five files
    (edit, write, sed -i, rm, echo >); editing and resubmitting that prompt from the tree
    offers the files from before it, and the second attempt runs on them."""
    from support.llm_server import tool_calls

    project = tmp_path / "project"
    write(project, {"app.py": "v1\n", "data.txt": "d1\n", "old.txt": "o\n", "log.txt": "l\n"})
    before = picture(project)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    llm.script(
        tool_calls(
            [
                ("edit", {"path": "app.py", "edits": [{"oldText": "v1", "newText": "v2"}]}),
                ("write", {"path": "new.py", "content": "x = 1\n"}),
                ("bash", {"command": "sed -i s/d1/d2/ data.txt && rm old.txt && echo 2 > log.txt"}),
            ]
        ),
        text("Done."),
        text("Second attempt."),
    )
    merged = Settings.from_dict(
        {"ui": {"cursorBlink": False}, "branchSummary": {"skipPrompt": True}}
    )

    def factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s,
            cwd=project,
            model="openai/test-model",
            api_base=f"{llm.url}/v1",
            settings=merged,
            workspace=Workspace(read_workspace_settings(merged), project),
        )

    app = PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"change five files", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 2)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        await wait_for(pilot, lambda: not (project / "old.txt").exists())
        tree = await open_tree(pilot)
        first = next(n for n in app.store.path_to() if n.role == "user")
        await go_to(pilot, tree, first.id)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, RestorePrompt))
        prompt = app.screen
        assert isinstance(prompt, RestorePrompt)
        assert [row.split("  ")[0] for row in listed_files(prompt)] == [
            "M app.py",
            "M data.txt",
            "M log.txt",
            "D new.py",
            "A old.txt",
        ]
        await pilot.press("r")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        await wait_for(pilot, lambda: picture(project) == before)
        assert app.store.leaf_id == first.parent_id
        editor = app.screen.query_one(PromptEditor)
        await wait_for(pilot, lambda: editor.text == "change five files")
        await pilot.press(*" again", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 3)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        assert picture(project) == before  # the second attempt ran on the original files


@pytest.mark.slow
async def test_a_move_the_files_cannot_follow_says_why(tmp_path: Path) -> None:
    """A point no checkpoint records (files changed there before pitui's first checkpoint):
    the conversation moves and one sentence says the files stay."""
    project = tmp_path / "project"
    write(project, {"app.py": "v1\n"})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    workspace = workspace_for(project)
    workspace.attach_store(store)
    first = store.append_message(message("user", "in pi"))
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "…"}}
    store.append_message(
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}
    )
    write(project, {"app.py": "v2\n"})
    store.append_message(message("toolResult", "ok", toolCallId="c1", toolName="bash"))
    store.append_message(message("assistant", "Done.", stopReason="stop"))
    assert await workspace.checkpoint("after-run") is not None
    path = store.path
    assert path is not None
    store.close()
    app = make_app(path, project)
    async with app.run_test(size=SIZE) as pilot:
        tree = await open_tree(pilot)
        await go_to(pilot, tree, first)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen_up(app, MainScreen))
        sentence = "No file checkpoint records that point, so only the conversation moves."
        await wait_for(pilot, lambda: sentence in [str(n.message) for n in app._notifications])
        assert (project / "app.py").read_text() == "v2\n"


@pytest.mark.slow
async def test_the_folder_is_captured_as_the_session_opens(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """The first capture of a folder (seconds on a big one) starts in a thread once the first
    frame is shown, before any prompt: the agent's first change then finds the store's index
    warm. Nothing is written to the session for it."""
    from pitui.checkpoint.store import store_folder_for
    from pitui.config.paths import state_dir

    project = tmp_path / "project"
    write(project, {f"src/f{i}.py": f"x = {i}\n" for i in range(200)})
    store = SessionStore.create(tmp_path / "sessions", str(project))
    merged = Settings.from_dict({"ui": {"cursorBlink": False}})

    def factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s,
            cwd=project,
            model="openai/test-model",
            api_base=f"{llm.url}/v1",
            settings=merged,
            workspace=Workspace(read_workspace_settings(merged), project),
        )

    folder = store_folder_for(project, state_dir() / "checkpoints")
    app = PituiApp(store, agent_factory=factory, settings=merged, clock=fixed_clock, cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: (folder / "last").exists())
        assert llm.requests == [] and app.store.entry_count == 0
        assert (folder / "index").stat().st_size > 0


@pytest.mark.slow
async def test_the_restore_prompt_lists_what_cannot_be_restored(tmp_path: Path) -> None:
    """A file too large to save at the target, shrunk since, and a name full of escapes: the
    dialog lists them as not restorable (inert text), and the restore leaves them."""
    project = tmp_path / "p"
    hostile = HOSTILE.replace("/", "_") + ".bin"
    write(project, {"app.py": "v1\n"})
    (project / "big.bin").write_bytes(b"B" * 5000)
    (project / hostile).write_bytes(b"H" * 5000)
    store = SessionStore.create(tmp_path / "s", str(project))
    workspace = workspace_for(project, {"checkpoint": {"maxFileSizeMB": 0.001}})
    workspace.attach_store(store)
    store.append_message(message("user", "x"))
    target = await workspace.checkpoint("before-change")
    assert target is not None
    (project / "big.bin").write_bytes(b"b")
    (project / hostile).write_bytes(b"h")
    write(project, {"app.py": "v2\n"})
    store.append_message(message("assistant", "done", stopReason="stop"))
    await workspace.checkpoint("after-run")
    preview = await workspace.preview_move(target.parent_id)
    assert [c.path for c in preview.plan.changes] == ["app.py"]  # type: ignore[union-attr]
    harness = Harness(RestorePrompt(preview))
    async with harness.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: screen_up(harness, RestorePrompt))
        shown = str(harness.screen.query_one("#restore-not-restorable", Static).render())
        await pilot.press("r")
        await pilot.pause()
    assert shown.startswith("Not restorable, left as they are: ")
    assert "big.bin (not saved at that point: larger than 1 KB)" in shown
    assert "\x1b" not in shown and "\x07" not in shown
    assert "[bold]x[_] [x[0]] red.bin (not saved at that point: larger than 1 KB)" in shown
    assert harness.result == RestoreChoice(True, "refuse")
    await workspace.save_before_restore(preview)
    result = await workspace.restore_files(preview)
    assert (project / "app.py").read_text() == "v1\n"
    assert (project / "big.bin").read_bytes() == b"b" and (project / hostile).read_bytes() == b"h"
    assert {k.path for k in result.kept} == {"big.bin", hostile}


async def test_the_always_answer_of_a_destructive_command_names_only_that_command(
    tmp_path: Path,
) -> None:
    request = build_request("bash", "call_1", {"command": "rm -rf build"}, tmp_path, ("rm",))
    harness = Harness(ApprovalPrompt(request))
    async with harness.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: screen_up(harness, ApprovalPrompt))
        options = harness.screen.query_one("#approval-options", OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        await pilot.press("alt+p")
        await pilot.pause()
    exact = "Alt+P  Always allow exactly this command (it deletes, overwrites or runs others)"
    assert exact in labels
    assert not any("matching rm" in label for label in labels)
    assert harness.result == "prefix"
