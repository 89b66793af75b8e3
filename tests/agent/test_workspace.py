"""Checkpoints and approval modes in real agent runs (scripted server, litellm's code path)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from support.llm_server import ScriptedLLMServer, text, tool_call, tool_calls
from support.pi_check import pi_context

from pitui.agent.approval import Answer, ApprovalRequest
from pitui.agent.events import AgentEvent, ApprovalDecided, CheckpointNote
from pitui.agent.session import AgentSession
from pitui.agent.workspace import Workspace
from pitui.checkpoint.record import CheckpointIndex
from pitui.checkpoint.settings import read_workspace_settings
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.session.shapes import APPROVAL_TYPE, CHECKPOINT_TYPE


def make_agent(
    tmp_path: Path,
    llm: ScriptedLLMServer,
    values: dict[str, Any] | None = None,
    *,
    interactive: bool = True,
    approve: str | None = None,
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "app.py").write_text("print('v1')\n")
    settings = Settings.from_dict(values)
    store = SessionStore.create(tmp_path / "sessions", str(project))
    workspace = Workspace(
        read_workspace_settings(settings, approve=approve),
        project,
        interactive=interactive,
        state_root=tmp_path / "state",
    )
    return AgentSession(
        store,
        cwd=project,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=settings,
        workspace=workspace,
    )


def customs(agent: AgentSession, custom_type: str) -> list[dict[str, Any]]:
    out = []
    for node in agent.store.path_to():
        entry = agent.store.data(node)
        if node.type == "custom" and entry.get("customType") == custom_type:
            out.append(entry)
    return out


async def test_a_run_that_writes_gets_checkpoints_before_and_after(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    project = agent.cwd
    llm.script(
        tool_call("read", {"path": "app.py"}),
        tool_calls(
            [
                ("write", {"path": "new.py", "content": "x = 1\n"}),
                ("bash", {"command": "rm app.py && echo gone > notes.txt"}),
            ]
        ),
        text("Done."),
    )
    result = await agent.prompt("refactor")
    assert result.ok
    assert (project / "new.py").exists() and not (project / "app.py").exists()
    checkpoints = customs(agent, CHECKPOINT_TYPE)
    assert [c["data"]["reason"] for c in checkpoints] == ["before-change", "after-run"]
    before, after = checkpoints
    # The first checkpoint comes after the read, before the write runs.
    ordered = [n.type if n.type != "message" else str(n.role) for n in agent.store.path_to()]
    first = ordered.index("custom")
    assert ordered[first - 3 : first + 2] == [
        "assistant",
        "toolResult",
        "assistant",
        "custom",
        "toolResult",
    ]
    assert before["data"]["changes"] == [] and before["data"]["previous"] is None
    # Bash changes are captured too: the whole folder is compared.
    assert {(c["path"], c["status"]) for c in after["data"]["changes"]} == {
        ("app.py", "D"),
        ("new.py", "A"),
        ("notes.txt", "A"),
    }
    assert after["data"]["previous"] == before["id"]
    assert after["data"]["counts"] == {"added": 2, "modified": 0, "deleted": 1}
    # The model never sees checkpoint entries.
    roles = [m["role"] for m in agent.store.project().messages]
    assert roles[-7:] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    index = CheckpointIndex(agent.store)
    assert index.run_markers() == {after["parentId"]: 3}


async def test_a_run_without_changes_adds_no_checkpoint_after_the_first(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(text("Hi."), text("Hi again."))
    await agent.prompt("hello")
    await agent.prompt("again")
    checkpoints = customs(agent, CHECKPOINT_TYPE)
    assert len(checkpoints) == 1  # the first one; the second run found the same files
    assert checkpoints[0]["data"]["reason"] == "after-run"
    assert checkpoints[0]["data"]["changes"] == [] and checkpoints[0]["data"]["previous"] is None
    # Someone edits a file between runs: the next run's checkpoint says it was not pitui.
    llm.script(text("Noted."))
    (agent.cwd / "app.py").write_text("edited in an editor\n")
    await agent.prompt("third")
    last = customs(agent, CHECKPOINT_TYPE)[-1]["data"]
    assert last["reason"] == "outside"
    assert last["changes"] == [{"path": "app.py", "status": "M"}]


async def test_read_only_mode_refuses_changes_with_a_readable_message(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, approve="read-only")
    llm.script(tool_call("write", {"path": "x.txt", "content": "no"}), text("Understood."))
    await agent.prompt("write x")
    assert not (agent.cwd / "x.txt").exists()
    results = [m for m in agent.store.project().messages if m["role"] == "toolResult"]
    assert results[-1]["isError"] is True
    assert "read-only" in results[-1]["content"][0]["text"]
    # The model was sent the refusal.
    sent = llm.requests[-1].messages
    assert any("read-only" in str(m.get("content")) for m in sent if m.get("role") == "tool")
    decisions = customs(agent, APPROVAL_TYPE)
    assert [d["data"]["decision"] for d in decisions] == ["deny"]
    assert decisions[0]["data"]["by"] == "read-only" and decisions[0]["data"]["tool"] == "write"
    assert decisions[0]["data"]["toolCallId"] == "call_1"


async def test_ask_mode_asks_and_remembers_always_answers(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, {"allow": {"bash": ["echo *"]}}, approve="ask")
    asked: list[ApprovalRequest] = []
    answers: list[Answer] = ["no", "prefix", "session"]

    async def asker(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return answers.pop(0)

    assert agent.workspace is not None
    agent.workspace.set_asker(asker)
    llm.script(
        tool_calls(
            [
                ("bash", {"command": "echo allowed > a.txt"}),  # redirect: never allow-listed
                ("bash", {"command": "echo listed"}),
                ("bash", {"command": "git status --short"}),
                ("bash", {"command": "git status"}),
                ("edit", {"path": "app.py", "edits": [{"oldText": "v1", "newText": "v2"}]}),
                ("write", {"path": "b.txt", "content": "b\n"}),
            ]
        ),
        text("ok"),
    )
    await agent.prompt("go")
    assert [r.subject for r in asked] == ["echo allowed > a.txt", "git status --short", "app.py"]
    assert asked[1].prefix_rule == "git status*"
    assert asked[2].preview and any(line.startswith("+print('v2')") for line in asked[2].preview)
    assert not (agent.cwd / "a.txt").exists()
    assert (agent.cwd / "app.py").read_text() == "print('v2')\n"
    assert (agent.cwd / "b.txt").exists()  # covered by "always for file edits this session"
    data = [d["data"] for d in customs(agent, APPROVAL_TYPE)]
    assert [(d["tool"], d["decision"], d["by"]) for d in data] == [
        ("bash", "deny", "user"),
        ("bash", "allow", "allow-list"),
        ("bash", "allow", "user"),
        ("bash", "allow", "grant"),
        ("edit", "allow", "user"),
        ("write", "allow", "grant"),
    ]
    assert data[2]["grant"] == "prefix" and data[2]["rule"] == "git status*"
    assert data[4]["grant"] == "session"


async def test_ask_mode_without_anyone_to_ask_refuses_and_says_so(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(
        tmp_path, llm, {"allow": {"bash": ["ls*"]}}, approve="ask", interactive=False
    )
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(
        tool_calls([("bash", {"command": "ls"}), ("bash", {"command": "touch y"})]),
        text("ok"),
    )
    await agent.prompt("go")
    assert not (agent.cwd / "y").exists()
    refusals = [e for e in events if isinstance(e, ApprovalDecided) and not e.allowed]
    assert [(e.subject, e.by) for e in refusals] == [("touch y", "no-prompt")]
    results = [m for m in agent.store.project().messages if m["role"] == "toolResult"]
    assert results[0]["isError"] is False
    assert "no one to ask" in results[1]["content"][0]["text"]


async def test_untrusted_project_settings_cannot_loosen_approval(tmp_path: Path) -> None:
    user = Settings.from_dict({"approval": "ask", "allow": {"bash": ["git *"]}})
    merged = Settings.from_dict({"approval": "auto", "allow": {"bash": ["*"]}})
    settings = read_workspace_settings(merged, user_only=user)
    assert settings.approval.mode == "ask"
    assert settings.approval.allow == {"bash": ("git *",)}
    # A stricter project setting still applies.
    strict = read_workspace_settings(Settings.from_dict({"approval": "read-only"}), user_only=user)
    assert strict.approval.mode == "read-only"
    # A typo (or a value of the wrong type) never means auto, and it is reported.
    for bad in ("asks", False):
        typed = Settings.from_dict({"approval": bad}, "settings.json")
        assert read_workspace_settings(typed).approval.mode == "ask"
        [warning] = typed.warnings
        assert warning.startswith("Ignoring setting approval in settings.json: ")
        assert warning.endswith("; using ask, the safe choice.")


async def test_without_git_the_run_works_and_says_checkpoints_are_off_once(
    tmp_path: Path, llm: ScriptedLLMServer, monkeypatch: Any
) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    agent = make_agent(tmp_path, llm)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(tool_call("write", {"path": "x.txt", "content": "x"}), text("ok"), text("again"))
    assert (await agent.prompt("write")).ok
    assert (await agent.prompt("more")).ok
    assert (agent.cwd / "x.txt").read_text() == "x"
    notes = [e.message for e in events if isinstance(e, CheckpointNote) and not e.progress]
    assert notes == ["git is not installed, so file checkpoints are off (install git)."]
    assert customs(agent, CHECKPOINT_TYPE) == []


async def test_files_a_checkpoint_leaves_out_are_said_once(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, {"checkpoint": {"maxFileSizeMB": 0.001}})
    (agent.cwd / "big.bin").write_bytes(b"x" * 5000)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(tool_call("write", {"path": "y.txt", "content": "y"}), text("ok"), text("ok"))
    await agent.prompt("one")
    await agent.prompt("two")
    notes = [e.message for e in events if isinstance(e, CheckpointNote) and not e.progress]
    assert notes == ["Not saved in file checkpoints: big.bin (larger than 1 KB)."]
    after = customs(agent, CHECKPOINT_TYPE)[-1]["data"]
    assert after["skipped"] == [{"path": "big.bin", "reason": "larger than 1 KB", "size": 5000}]


async def test_no_git_runs_on_the_event_loop(
    tmp_path: Path, llm: ScriptedLLMServer, monkeypatch: Any
) -> None:
    """Captures, comparisons, previews, the pre-restore checkpoint and the restore itself run
    git in threads: the event loop (the TUI's) never waits on a git process."""
    import subprocess
    import threading

    loop_thread = threading.get_ident()
    on_loop: list[str] = []
    off_loop: list[str] = []

    def spy(real: Any) -> Any:
        def call(args: Any, *a: Any, **kw: Any) -> Any:
            argv = [str(x) for x in args] if isinstance(args, list | tuple) else [str(args)]
            if argv and Path(argv[0]).name.startswith("git"):
                (on_loop if threading.get_ident() == loop_thread else off_loop).append(
                    " ".join(argv[1:3])
                )
            return real(args, *a, **kw)

        return call

    monkeypatch.setattr(subprocess, "run", spy(subprocess.run))
    monkeypatch.setattr(subprocess, "Popen", spy(subprocess.Popen))
    agent = make_agent(tmp_path, llm)
    workspace = agent.workspace
    assert workspace is not None
    llm.script(tool_call("write", {"path": "app.py", "content": "print('v2')\n"}), text("ok"))
    assert (await agent.prompt("change it")).ok
    before = customs(agent, CHECKPOINT_TYPE)[0]
    move = await workspace.preview_move(before["parentId"])
    assert move.differs
    await workspace.save_before_restore(move)
    await workspace.restore_files(move)
    assert (agent.cwd / "app.py").read_text() == "print('v1')\n"
    assert on_loop == []
    assert off_loop, "the spy saw no git process"


async def test_pi_reads_a_session_with_checkpoints_and_approvals_as_pitui_does(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """The ``pitui.checkpoint`` and ``pitui.approval`` entries are custom entries pi 1.6 skips:
    its own code projects the same messages as pitui, and the next request carries them."""
    agent = make_agent(
        tmp_path, llm, {"approval": "ask", "allow": {"bash": ["touch *"]}}, interactive=False
    )
    llm.script(
        tool_calls(
            [("bash", {"command": "touch a.txt"}), ("write", {"path": "b.txt", "content": "b"})]
        ),
        text("The write was refused."),
        text("Nothing to do."),
    )
    assert (await agent.prompt("one")).ok
    (agent.cwd / "outside.txt").write_text("edited by hand\n")  # an "outside" checkpoint
    assert (await agent.prompt("two")).ok
    kinds = [
        e["data"].get("reason") or e["data"].get("by") for e in customs(agent, CHECKPOINT_TYPE)
    ]
    assert kinds == ["before-change", "after-run", "outside"]
    decisions = [e["data"]["by"] for e in customs(agent, APPROVAL_TYPE)]
    assert decisions == ["allow-list", "no-prompt"]
    path = agent.store.path
    assert path is not None
    agent.store.close()
    pi = pi_context(Path(path))
    mine = SessionStore.open(path).project().messages

    def shape(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
        out = []
        for m in messages:
            content = m.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            body = " ".join(
                str(b.get("text") or b.get("name") or "") for b in blocks if isinstance(b, dict)
            )
            out.append((m["role"], body))
        return out

    assert shape(pi["messages"]) == shape(mine)
    assert pi.get("error") is None and pi["payload"] is not None
    assert len(pi["payload"]["messages"]) == len(mine)


async def test_the_files_from_before_the_first_prompt_come_back_from_the_command_line(
    tmp_path: Path, llm: ScriptedLLMServer, capsys: Any
) -> None:
    """The README's walk-through: the first prompt changes five files (edit, write, sed -i, rm,
    echo >); `pitui restore FILE --leaf <the first prompt's parent>` brings them all back."""
    from support.folders import picture, write

    from pitui.cli import main

    project = tmp_path / "project"
    write(
        project,
        {"app.py": "print('v1')\n", "data.txt": "d1\n", "old.txt": "o\n", "log.txt": "l\n"},
    )
    before = picture(project)
    settings = Settings()
    store = SessionStore.create(tmp_path / "sessions", str(project))
    agent = AgentSession(
        store,
        cwd=project,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=settings,
        workspace=Workspace(read_workspace_settings(settings), project),
    )
    llm.script(
        tool_calls(
            [
                ("edit", {"path": "app.py", "edits": [{"oldText": "v1", "newText": "v2"}]}),
                ("write", {"path": "new.py", "content": "x = 1\n"}),
                ("bash", {"command": "sed -i s/d1/d2/ data.txt && rm old.txt && echo 2 > log.txt"}),
            ]
        ),
        text("Done."),
    )
    assert (await agent.prompt("change five files")).ok
    changed = picture(project)
    assert changed != before
    first = next(n for n in store.path_to() if n.role == "user")
    above = first.parent_id
    assert above is not None  # the model and thinking level the session starts with
    path = store.path
    assert path is not None
    store.close()

    def pitui(*args: str) -> int:  # the command line runs its own event loop: in a thread
        return main(list(args))

    assert await asyncio.to_thread(pitui, "restore", str(path), "--leaf", above, "--dry-run") == 0
    listed = capsys.readouterr().out
    for line in ("M app.py", "D new.py", "M data.txt", "A old.txt", "M log.txt"):
        assert f"  {line}" in listed
    assert picture(project) == changed
    assert await asyncio.to_thread(pitui, "restore", str(path), "--leaf", above) == 0
    assert picture(project) == before
    assert f"moved the leaf to {above}" in capsys.readouterr().out
    # Going forward again is one more restore (to the end of the first run).
    reopened = SessionStore.open(path, read_only=True)
    last_reply = [n for n in reopened.all_nodes() if n.role == "assistant"][-1]
    reopened.close()
    assert await asyncio.to_thread(pitui, "restore", str(path), "--leaf", last_reply.id) == 0
    assert picture(project) == changed


async def test_an_untrusted_project_cannot_switch_the_net_off(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """A repository's `.pitui/settings.json` that sets `checkpoint.enabled: false` (and other
    values that would save less) is ignored until `pitui trust`, with one note; checkpoints
    run. Values that keep more apply."""
    import json

    from pitui.checkpoint.settings import workspace_settings_for
    from pitui.config.trust import trust

    project = tmp_path / "project"
    (project / ".pitui").mkdir(parents=True)
    (project / "app.py").write_text("print('v1')\n")
    (project / ".pitui" / "settings.json").write_text(
        json.dumps(
            {
                "checkpoint": {
                    "enabled": False,
                    "exclude": ["*"],
                    "maxFileSizeMB": 0.001,
                    "keepDays": 90,
                }
            }
        )
    )
    settings = workspace_settings_for(project)
    assert settings.checkpoint.enabled and settings.checkpoint.exclude == ()
    assert settings.checkpoint.max_file_size == 10 * 1024 * 1024
    assert settings.checkpoint.keep_days == 90  # keeps more: applies
    [note] = settings.notes
    assert note == (
        "Ignoring checkpoint.enabled, checkpoint.exclude, checkpoint.maxFileSizeMB in "
        f"{project / '.pitui' / 'settings.json'}: until you run `pitui trust` in this project, "
        "its settings may only make file checkpoints keep more, never less."
    )
    store = SessionStore.create(tmp_path / "sessions", str(project))
    agent = AgentSession(
        store,
        cwd=project,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=Settings(),
        workspace=Workspace(settings, project, state_root=tmp_path / "state"),
    )
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(tool_call("write", {"path": "app.py", "content": "print('v2')\n"}), text("ok"))
    assert (await agent.prompt("change it")).ok
    assert [c["data"]["reason"] for c in customs(agent, CHECKPOINT_TYPE)] == [
        "before-change",
        "after-run",
    ]
    assert [e.message for e in events if isinstance(e, CheckpointNote) and not e.progress] == [note]
    # Once trusted, the project's settings are the user's to keep.
    trust(project)
    trusted = workspace_settings_for(project)
    assert not trusted.checkpoint.enabled and trusted.notes == ()


async def test_a_failing_capture_is_said_once_and_the_next_run_tries_again(
    tmp_path: Path, llm: ScriptedLLMServer, monkeypatch: Any
) -> None:
    import errno

    from pitui.checkpoint.store import CheckpointStore

    agent = make_agent(tmp_path, llm)
    real = CheckpointStore.capture_locked
    failing = [True]

    def capture_locked(self: CheckpointStore) -> Any:
        if failing[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self)

    monkeypatch.setattr(CheckpointStore, "capture_locked", capture_locked)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    for n in range(3):
        llm.script(tool_call("write", {"path": f"f{n}.txt", "content": "x"}), text("ok"))
        if n == 2:
            failing[0] = False
        assert (await agent.prompt(f"write {n}")).ok  # a run never fails for a checkpoint
    assert all((agent.cwd / f"f{n}.txt").exists() for n in range(3))
    assert [e.message for e in events if isinstance(e, CheckpointNote) and not e.progress] == [
        "A file checkpoint failed (the disk is full); pitui tries again at the next run.",
        "File checkpoints work again.",
    ]
    assert [c["data"]["reason"] for c in customs(agent, CHECKPOINT_TYPE)] == [
        "before-change",
        "after-run",
    ]


async def test_the_store_stays_under_its_cap_when_a_binary_is_rewritten_every_run(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """A 1 MB binary the agent rewrites at every run (real runs: a checkpoint before the
    first change and one after): the churn guard leaves it out from its third change, so the
    store stops growing; it stays under a 4 MB cap, and the note says why once."""
    agent = make_agent(tmp_path, llm, {"checkpoint": {"maxStoreMB": 4}})
    workspace = agent.workspace
    assert workspace is not None
    command = "head -c 1048576 /dev/urandom > model.bin"
    (agent.cwd / "model.bin").write_bytes(b"\0" * 1024 * 1024)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    sizes = []
    for n in range(8):
        llm.script(tool_call("bash", {"command": command}), text(f"run {n}"))
        assert (await agent.prompt(f"run {n}")).ok
        await workspace.maintained()
        store = await workspace.store()
        assert store is not None
        sizes.append(store.size_bytes())
    assert max(sizes) <= 4 * 1024 * 1024, sizes
    assert sizes[-1] == sizes[3], sizes  # no growth once it is left out
    left_out = [e.message for e in events if isinstance(e, CheckpointNote) and not e.progress]
    assert left_out == [
        "Not saved in file checkpoints: model.bin (a binary file that changes at every checkpoint)."
    ]


async def test_read_only_mode_lets_the_agent_look_around(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """Read-only mode: read-only tools and commands known to only read run (recorded as
    allowed by read-only); anything that could write or run something else is refused."""
    agent = make_agent(tmp_path, llm, approve="read-only")
    project = agent.cwd
    (project / "notes.txt").write_text("keep me\n")
    allowed = ["git status", "ls -la", "cat app.py | grep v1", "find . -name '*.py'"]
    refused = [
        "rm notes.txt",
        "ls > listing.txt",
        "find . -name notes.txt -delete",
        "cat $(rm notes.txt)",
        "ls && rm notes.txt",
        "git log --output=log.txt",
        "git branch evil",
    ]
    llm.script(
        tool_calls(
            [("read", {"path": "app.py"})]
            + [("bash", {"command": c}) for c in allowed + refused]
            + [("write", {"path": "x.txt", "content": "no"})]
        ),
        text("Looked around."),
    )
    assert (await agent.prompt("look around")).ok
    results = [m for m in agent.store.project().messages if m["role"] == "toolResult"]
    assert "print('v1')" in results[0]["content"][0]["text"]
    outputs = {r["toolCallId"]: r for r in results}
    assert "app.py" in outputs["call_3"]["content"][0]["text"]  # ls -la ran
    assert "print('v1')" in outputs["call_4"]["content"][0]["text"]  # cat | grep ran
    for n in range(len(allowed) + 2, len(allowed) + len(refused) + 3):
        assert "read-only" in outputs[f"call_{n}"]["content"][0]["text"], n
    assert (project / "notes.txt").read_text() == "keep me\n"
    assert not (project / "listing.txt").exists() and not (project / "log.txt").exists()
    assert not (project / "x.txt").exists()
    data = [d["data"] for d in customs(agent, APPROVAL_TYPE)]
    assert [(d["decision"], d["by"]) for d in data[:4]] == [("allow", "read-only")] * 4
    assert data[0]["rule"] == "read-only command (git status)"
    assert {(d["decision"], d["by"]) for d in data[4:]} == {("deny", "read-only")}


async def test_always_for_a_destructive_command_covers_only_that_command(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, approve="ask")
    project = agent.cwd
    for name in ("a.txt", "b.txt"):
        (project / name).write_text(name)
    asked: list[ApprovalRequest] = []

    async def asker(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return "prefix" if request.subject == "rm a.txt" else "no"

    assert agent.workspace is not None
    agent.workspace.set_asker(asker)
    llm.script(
        tool_calls(
            [
                ("bash", {"command": "rm a.txt"}),
                ("bash", {"command": "rm b.txt"}),
                ("bash", {"command": "touch a.txt && echo again"}),
                ("bash", {"command": "rm a.txt"}),
            ]
        ),
        text("ok"),
    )
    await agent.prompt("clean up")
    assert [r.subject for r in asked] == ["rm a.txt", "rm b.txt", "touch a.txt && echo again"]
    assert asked[0].exact and asked[0].prefix_rule == "rm a.txt"
    assert not asked[2].exact and asked[2].prefix_rule == "touch a.txt*"
    assert (project / "b.txt").exists()  # "rm*" was never granted
    assert not (project / "a.txt").exists()  # the same command again: granted
    data = [d["data"] for d in customs(agent, APPROVAL_TYPE)]
    assert [(d["decision"], d["by"]) for d in data] == [
        ("allow", "user"),
        ("deny", "user"),
        ("deny", "user"),
        ("allow", "grant"),
    ]
    assert data[0]["rule"] == "rm a.txt" and data[3]["rule"] == "rm a.txt"


async def test_a_folder_too_big_to_checkpoint_is_said_once_in_its_own_words(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, {"checkpoint": {"maxFiles": 5}})
    for i in range(10):
        (agent.cwd / f"f{i}.txt").write_text("x")
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    llm.script(tool_call("write", {"path": "y.txt", "content": "y"}), text("ok"), text("again"))
    assert (await agent.prompt("one")).ok
    assert (await agent.prompt("two")).ok
    assert [e.message for e in events if isinstance(e, CheckpointNote) and not e.progress] == [
        "This folder has more than 5 files that are not ignored, so checkpoints are off here: "
        "ignore big folders with .gitignore or the checkpoint.exclude setting."
    ]
    assert customs(agent, CHECKPOINT_TYPE) == []
