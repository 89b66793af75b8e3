"""Snapshots of tool blocks (SVGs under ``snapshots/test_tool_block_snapshots/``): an edit as a
numbered diff, a write as a file preview, a running command's live tail.

Synchronous on purpose: ``snap_compare`` runs its own event loop. Entries are written here
(no model calls), the clock is the test clock, the size is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from pitui.agent.events import ToolOutput, ToolStart
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.messages import AgentUpdate
from pitui.ui.widgets.chat import ChatView

SIZE = (100, 32)

BEFORE = "import os\nimport sys\n\n\ndef main() -> None:\n    print(sys.argv)\n"
UNIFIED = "\n".join(
    [
        "--- /work/app.py",
        "+++ /work/app.py",
        "@@ -1,6 +1,7 @@",
        " import os",
        "-import sys",
        "+import json",
        "+import re",
        " ",
        " ",
        " def main() -> None:",
        "-    print(sys.argv)",
        "+    print(json.dumps(os.environ.get('HOME')))",
    ]
)
WRITTEN = "".join(
    [
        '"""A small module."""\n',
        "\n",
        "from __future__ import annotations\n",
        "\n",
        "\n",
        "def greet(name: str) -> str:\n",
        '    return f"Hello, {name}!"\n',
        *(f"# filler line {n}\n" for n in range(1, 24)),
    ]
)


def _file_change_session(store: SessionStore) -> None:
    store.append_message({"role": "user", "content": [{"type": "text", "text": "Tidy app.py."}]})
    edit = {
        "type": "toolCall",
        "id": "e1",
        "name": "edit",
        "arguments": {
            "path": "/work/app.py",
            "edits": [
                {"oldText": "import sys\n", "newText": "import json\nimport re\n"},
                {
                    "oldText": "    print(sys.argv)\n",
                    "newText": "    print(json.dumps(os.environ.get('HOME')))\n",
                },
            ],
        },
    }
    write = {
        "type": "toolCall",
        "id": "w1",
        "name": "write",
        "arguments": {"path": "/work/greet.py", "content": WRITTEN},
    }
    store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Editing, then a new file."}, edit, write],
            "stopReason": "toolUse",
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "e1",
            "toolName": "edit",
            "content": [{"type": "text", "text": "Successfully replaced 2 block(s) in app.py."}],
            "details": {"path": "/work/app.py", "diff": UNIFIED, "firstChangedLine": 2},
            "isError": False,
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "w1",
            "toolName": "write",
            "content": [{"type": "text", "text": "Successfully wrote 640 bytes to greet.py"}],
            "details": {"path": "/work/greet.py", "bytes": 640},
            "isError": False,
        }
    )


def test_edit_diff_and_write_preview(
    snap_compare: Any, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory(model=None)
    _file_change_session(app.store)
    assert snap_compare(app, terminal_size=SIZE)


def test_edit_and_write_expanded_with_ctrl_o(
    snap_compare: Any, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory(model=None)
    _file_change_session(app.store)

    async def expand(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await pilot.press("ctrl+o")
        await pilot.pause()
        chat = pilot.app.query_one(ChatView)
        chat.scroll_home(animate=False)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=expand)


def test_running_command_shows_its_live_tail(
    snap_compare: Any, app_factory: Callable[..., PituiApp]
) -> None:
    app = app_factory(model=None)
    app.store.append_message({"role": "user", "content": [{"type": "text", "text": "Test it."}]})

    async def stream(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        publish = pilot.app.bridge.publish  # type: ignore[attr-defined]
        command = {"command": "python -m pytest -q"}
        publish(AgentUpdate(ToolStart("b1", "bash", command)))
        chunks = [f"tests/test_{n}.py \x1b[32m....\x1b[0m\n" for n in range(1, 9)]
        chunks.append("\x1b]0;TITLE\x07tests/test_9.py \x1b[31mF\x1b[0m")
        for chunk in chunks:
            publish(AgentUpdate(ToolOutput("b1", chunk)))
        await pilot.app.query_one(ChatView).wait_idle()
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=stream)
