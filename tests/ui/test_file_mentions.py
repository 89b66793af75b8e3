"""``@`` file mentions through the TUI: the picker (git-aware, fuzzy, Tab/Enter/Esc, hostile
names), the file's content in the message as pi's ``<file name>`` blocks (checked with pi
1.6's own code), binary and huge files with a note, and a snapshot of the picker."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import fixed_clock
from support.llm_server import ScriptedLLMServer, text
from support.pi_check import pi_context
from support.screens import SIZE, wait_for
from textual.pilot import Pilot

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.session.shapes import message_text
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import UserBlock
from pitui.ui.widgets.file_picker import FileMenu
from pitui.ui.widgets.prompt import PromptEditor

SnapCompare = Callable[..., bool]
HOSTILE = "[bold]x[/] \x1b[31mred\x1b]52;c;Zm9v\x07.txt"


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"},
    )


def project_app(
    tmp_path: Path, files: dict[str, str | bytes], *, api_base: str = "http://127.0.0.1:9/v1"
) -> tuple[PituiApp, Path]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    write(project, files)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    settings = Settings.from_dict({"ui": {"cursorBlink": False}})

    def factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s, cwd=project, model="openai/test-model", api_base=api_base, settings=settings
        )

    app = PituiApp(store, agent_factory=factory, settings=settings, clock=fixed_clock, cwd=project)
    return app, project


async def picker_shows(pilot: Pilot[Any], editor: PromptEditor) -> list[str]:
    await wait_for(pilot, lambda: editor.file_matches is not None)
    menu = pilot.app.screen.query_one(FileMenu)
    await wait_for(pilot, lambda: menu.has_class("-open"))
    return editor.file_matches or []


def users(app: PituiApp) -> list[dict[str, Any]]:
    store = app.store
    return [store.data(n)["message"] for n in store.path_to() if n.role == "user"]


async def test_at_opens_a_fuzzy_picker_and_tab_puts_the_path_in(tmp_path: Path) -> None:
    app, _ = project_app(
        tmp_path,
        {
            "src/widgets/chat_view.py": "x\n",
            "src/chatter/log.txt": "x\n",
            "docs/my notes.md": "x\n",
            "README.md": "x\n",
        },
    )
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"explain @chat")
        matches = await picker_shows(pilot, editor)
        assert matches[0] == "src/widgets/chat_view.py"  # in the name beats in a folder
        assert "src/chatter/log.txt" in matches
        await pilot.press("tab")
        assert editor.text == "explain @src/widgets/chat_view.py "
        assert not app.screen.query_one(FileMenu).has_class("-open")
        # A name with a space is quoted; Down chooses another match; Enter takes it.
        await pilot.press(*"and @no")
        await wait_for(pilot, lambda: (editor.file_matches or [""])[0] == "docs/my notes.md")
        await pilot.press("enter")
        assert editor.text == 'explain @src/widgets/chat_view.py and @"docs/my notes.md" '
        # Esc closes the picker for this word; typing on does not reopen it.
        await pilot.press(*"@READ")
        await picker_shows(pilot, editor)
        await pilot.press("escape")
        assert editor.file_query is None
        await pilot.press(*"ME")
        await pilot.pause()
        assert editor.file_query is None
        assert editor.text.endswith("@README")
        # An e-mail address is no mention.
        await pilot.press("space", *"me@home")
        await pilot.pause()
        assert editor.file_query is None


async def test_the_picker_lists_what_git_lists(tmp_path: Path) -> None:
    app, project = project_app(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n",
            "tracked.py": "x\n",
            "new_file.py": "x\n",
            "build/out.py": "x\n",
            "debug.log": "x\n",
        },
    )
    git(project, "init", "-q")
    git(project, "add", "tracked.py", ".gitignore")
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press("@")
        listed = await picker_shows(pilot, editor)
    assert set(listed) == {".gitignore", "tracked.py", "new_file.py"}


async def test_outside_git_gitignore_files_are_respected(tmp_path: Path) -> None:
    app, _ = project_app(
        tmp_path,
        {
            ".gitignore": "node_modules/\n*.tmp\n!keep.tmp\n",
            "app.py": "x\n",
            "sub/.gitignore": "/generated.py\n",
            "sub/generated.py": "x\n",
            "sub/deep/generated.py": "x\n",
            "node_modules/lib/index.js": "x\n",
            "scratch.tmp": "x\n",
            "keep.tmp": "x\n",
        },
    )
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press("@")
        listed = await picker_shows(pilot, editor)
    assert set(listed) == {
        ".gitignore",
        "app.py",
        "keep.tmp",
        "sub/.gitignore",
        "sub/deep/generated.py",
    }


async def test_the_content_goes_into_the_message_as_pi_puts_it(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    llm.script(text("It prints hi."))
    app, project = project_app(
        tmp_path, {"a.py": 'print("hi")\n', "empty.txt": ""}, api_base=f"{llm.url}/v1"
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"explain @a.py, and @empty.txt; not @property or @missing.py")
        await pilot.press("escape")  # close the picker the last word opened
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(llm.requests) == 1)
        await wait_for(pilot, lambda: app.agent is not None and not app.agent.running)
        message = users(app)[0]
        shown = app.query_one(UserBlock).text
        path = app.store.path
    typed = "explain @a.py, and @empty.txt; not @property or @missing.py"
    a = f'<file name="{project / "a.py"}">\nprint("hi")\n</file>\n'
    empty = f'<file name="{project / "empty.txt"}"></file>\n'
    assert message["content"] == [
        {"type": "text", "text": a},
        {"type": "text", "text": empty},
        {"type": "text", "text": typed},
    ]
    assert message["pituiFiles"] == [
        {"path": "a.py", "size": 12, "lines": 1},
        {"path": "empty.txt", "size": 0, "lines": 0},
    ]
    assert message_text(message) == typed  # history, the tree, "edit and resubmit"
    assert shown == f"{typed}\n@ a.py · 1 line, 12 B\n@ empty.txt · empty"
    # The model got the file before the question (as pi's @file).
    sent = llm.requests[0].messages[-1]["content"]
    assert json.dumps(sent).index("print(") < json.dumps(sent).index("explain @a.py")
    # pi 1.6 reads the message as the same text: the files, then the prompt.
    assert path is not None
    pi = pi_context(path)
    pi_user = next(m for m in pi["messages"] if m["role"] == "user")
    assert "".join(b["text"] for b in pi_user["content"]) == a + empty + typed


async def test_binary_huge_and_hostile_files_are_named_with_a_note(tmp_path: Path) -> None:
    big = "".join(f"line {i}\n" for i in range(5000))
    app, project = project_app(
        tmp_path,
        {"logo.png": b"\x89PNG\r\n\x1a\n\0\0\0", "big.log": big, HOSTILE: "[red]boom[/]\x1b[2J\n"},
    )
    async with app.run_test(size=SIZE) as pilot:
        editor = app.query_one(PromptEditor)
        await pilot.press(*"look at @logo.png @big.log @")
        await picker_shows(pilot, editor)
        menu = app.screen.query_one(FileMenu)
        labels = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert any("[bold]x[/]" in label for label in labels)  # shown as text, not markup
        assert not any("\x1b" in label or "\x07" in label for label in labels)
        hostile = next(m for m in editor.file_matches or [] if m.startswith("[bold]"))
        editor.pick_file((editor.file_matches or []).index(hostile))
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(users(app)) == 1)
        await wait_for(pilot, lambda: len(app.query(UserBlock)) == 1)
        message = users(app)[0]
        shown = app.query_one(UserBlock).text
    logo, log, odd = message["content"][:3]
    assert logo["text"] == (
        f'<file name="{project / "logo.png"}">(a binary file of 11 B: its content is not '
        "included)</file>\n"
    )
    assert "\0" not in json.dumps(message)
    assert log["text"].count("\n") < 2010
    assert "line 1999\n" in log["text"] and "line 2000\n" not in log["text"]
    assert "Use the read tool with offset=2001 to read on." in log["text"]
    assert message["pituiFiles"][0] == {
        "path": "logo.png",
        "size": 11,
        "lines": 0,
        "omitted": "binary",
    }
    assert message["pituiFiles"][1]["truncated"] is True
    assert "boom" in odd["text"]  # the model reads the content as it is
    assert "\x1b" not in shown and "\x07" not in shown
    assert "@ logo.png · binary file (11 B): not included" in shown
    assert "@ big.log · first 2000 lines of" in shown


async def test_a_fifo_is_no_mention_and_never_blocks(tmp_path: Path) -> None:
    import os

    app, project = project_app(tmp_path, {"a.py": "x\n"})
    os.mkfifo(project / "pipe")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"read @pipe now", "enter")
        await wait_for(pilot, lambda: len(users(app)) == 1)
        message = users(app)[0]
    assert "pituiFiles" not in message
    assert message["content"] == [{"type": "text", "text": "read @pipe now"}]


def test_file_picker_snapshot(snap_compare: SnapCompare, tmp_path: Path) -> None:
    app, _ = project_app(
        tmp_path,
        {
            "pitui/ui/widgets/prompt.py": "x\n",
            "pitui/ui/widgets/prompt_history.py": "x\n",
            "tests/ui/test_prompt.py": "x\n",
            "pitui/agent/system_prompt.py": "x\n",
            "docs/prompts.md": "x\n",
            HOSTILE: "x\n",
        },
    )

    async def type_mention(pilot: Pilot[Any]) -> None:
        editor = pilot.app.query_one(PromptEditor)
        await pilot.press(*"explain @prompt")
        await wait_for(pilot, lambda: len(editor.file_matches or []) == 5)
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=type_mention)


async def test_a_prompt_with_a_file_sent_during_a_run_is_steered_in_order(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    from support.llm_server import slow

    llm.script(slow(" ".join(["word"] * 40), 0.1), text("Got both."))
    app, _ = project_app(tmp_path, {"a.py": "A = 1\n"}, api_base=f"{llm.url}/v1")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"start", "enter")
        agent = app.agent
        assert agent is not None
        await wait_for(pilot, lambda: agent.running and len(llm.requests) == 1)
        await pilot.press(*"see @a.py", "escape", "enter")
        await pilot.press(*"and then this", "enter")
        await wait_for(pilot, lambda: len(llm.requests) == 2, timeout=40)
        await wait_for(pilot, lambda: not agent.running)
        texts = [message_text(m) for m in users(app)]
        assert texts == ["start", "see @a.py", "and then this"]
        assert users(app)[1]["pituiFiles"] == [{"path": "a.py", "size": 6, "lines": 1}]
    last = json.dumps(llm.requests[1].messages)
    assert last.index("A = 1") < last.index("see @a.py") < last.index("and then this")
