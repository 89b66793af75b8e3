"""`pitui -p` end to end: a real process, litellm, the scripted server, the session file."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.llm_server import ScriptedLLMServer, error, slow, text, tool_call, tool_calls
from support.print_mode import isolated_env, model_args, pitui_argv, run_pitui

from pitui.session import SessionStore

SECRET = "sk-test-secret-5f0c1a9e"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path, SECRET)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def session_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.jsonl"))


def check_schema(path: Path) -> list[dict[str, object]]:
    """Every line is compact JSON; entries have pi's base fields; message shapes are pi's."""
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "session" and header["version"] == 3
    entries = [json.loads(line) for line in lines[1:]]
    ids = set()
    for entry in entries:
        assert {"type", "id", "parentId", "timestamp"} <= set(entry)
        assert entry["timestamp"].endswith("Z") and len(entry["timestamp"]) == 24
        assert entry["id"] not in ids and len(entry["id"]) == 8
        ids.add(entry["id"])
        if entry["type"] == "message":
            message = entry["message"]
            assert isinstance(message["timestamp"], int)
            if message["role"] == "assistant":
                assert {"content", "api", "provider", "model", "usage", "stopReason"} <= set(
                    message
                )
                assert {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"} <= set(
                    message["usage"]
                )
            if message["role"] == "toolResult":
                assert {"toolCallId", "toolName", "content", "isError"} <= set(message)
    for line in lines:
        assert ": " not in line.split('"')[0]  # compact separators
    return entries


def test_print_mode_runs_tools_and_writes_a_pi_session(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    sessions = tmp_path / "sessions"
    llm.script(
        tool_call("write", {"path": "src/hello.py", "content": "print('hello')\n"}),
        text("Created src/hello.py."),
    )
    result = run_pitui(["-p", "create hello", *model_args(llm, sessions)], project, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Created src/hello.py.\n"
    assert "[write: src/hello.py]" in result.stderr
    assert (project / "src" / "hello.py").read_text() == "print('hello')\n"
    [path] = session_files(sessions)
    entries = check_schema(path)
    assert SECRET not in path.read_text()
    store = SessionStore.open(path, read_only=True)
    roles = [m["role"] for m in store.project().messages]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant"]
    assert store.project().tool_names == ["read", "bash", "edit", "write"]
    assert len(entries) == len(store)

    # --continue picks it up with the whole context.
    llm.script(text("It prints hello."))
    again = run_pitui(
        ["-p", "what does it do?", "--continue", *model_args(llm, sessions)], project, env
    )
    assert again.returncode == 0, again.stderr
    assert session_files(sessions) == [path]
    sent = llm.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[-1]["content"] == "what does it do?"
    for request in llm.requests:
        assert SECRET not in json.dumps(request.body)


def test_json_events(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    llm.script(tool_call("bash", {"command": "echo hi"}), text("done"))
    result = run_pitui(["-p", "go", "--json", *model_args(llm, tmp_path / "s")], project, env)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    for kind in ("message_start", "message_delta", "message_end", "tool_start", "tool_end"):
        assert kind in kinds
    assert kinds[-1] == "done" and events[-1]["reason"] == "done"
    assert "".join(e["text"] for e in events if e["type"] == "message_delta") == "done"


def test_missing_key_exits_1_and_writes_nothing(
    tmp_path: Path, project: Path, env: dict[str, str]
) -> None:
    sessions = tmp_path / "sessions"
    args = ["-p", "hi", "--model", "anthropic/claude-sonnet-4-5", "--session-dir", str(sessions)]
    result = run_pitui(args, project, env)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "pitui: No API key for anthropic: set ANTHROPIC_API_KEY in the environment."
    ]
    assert session_files(sessions) == []


def test_provider_failure_exits_1(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    llm.script(error(401, "Incorrect API key provided"))
    result = run_pitui(["-p", "hi", *model_args(llm, tmp_path / "s")], project, env)
    assert result.returncode == 1
    assert "API key" in result.stderr and "Traceback" not in result.stderr
    assert len(llm.requests) == 1


def test_bad_usage_exits_2(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    assert run_pitui(["--no-such-flag"], project, env).returncode == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a session\n")
    result = run_pitui(
        ["-p", "hi", "--session", str(bad), *model_args(llm, tmp_path / "s")[:4]], project, env
    )
    assert result.returncode == 2 and "not a pi session" in result.stderr
    assert bad.read_text() == "not a session\n"
    # Two sessions whose ids share a prefix.
    sessions = tmp_path / "same-prefix"
    for session_id in ("abc-1", "abc-2"):
        store = SessionStore.create(sessions, str(project), session_id=session_id)
        store.append_message({"role": "user", "content": "x", "timestamp": 1})
        store.close()
    result = run_pitui(["-p", "hi", "--session", "abc", *model_args(llm, sessions)], project, env)
    assert result.returncode == 2
    assert "ambiguous" in result.stderr and "abc-1" in result.stderr and "abc-2" in result.stderr


def test_locked_session_exits_2(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    sessions = tmp_path / "s"
    store = SessionStore.create(sessions, str(project))
    store.append_message({"role": "user", "content": "x", "timestamp": 1})
    assert store.path is not None
    try:
        result = run_pitui(
            ["-p", "hi", "--session", str(store.path), *model_args(llm, sessions)], project, env
        )
        assert result.returncode == 2
        assert "open in another pitui" in result.stderr
    finally:
        store.close()


def test_missing_session_path_becomes_a_new_session(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    target = tmp_path / "named" / "mine.jsonl"
    llm.script(text("hello"))
    result = run_pitui(
        ["-p", "hi", "--session", str(target), *model_args(llm, tmp_path / "s")], project, env
    )
    assert result.returncode == 0, result.stderr
    assert target.is_file() and check_schema(target)


def test_ctrl_c_aborts_with_130_and_keeps_the_partial_reply(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    sessions = tmp_path / "s"
    llm.script(slow("a b c d e f g h i j k l", delay_per_chunk=0.5, chunks=12))
    process = subprocess.Popen(
        pitui_argv("-p", "talk", *model_args(llm, sessions)),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    # The reply has started: the server sent its first words (a pipe gets text per reply).
    deadline = time.monotonic() + 60
    while not (llm.requests and llm.requests[0].events_sent >= 2):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert out.startswith("a b")  # the partial reply is what the user got
    [path] = session_files(sessions)
    store = SessionStore.open(path, read_only=True)
    last = store.project().messages[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert last["content"][0]["text"].startswith("a")


def test_print_mode_checkpoints_the_run_and_ask_refuses_what_it_cannot_ask(
    tmp_path: Path,
    project: Path,
    env: dict[str, str],
    llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`-p` takes checkpoints like the TUI; with --approve ask it runs what the allow-list
    allows, refuses the rest, and says so."""
    sessions = tmp_path / "sessions"
    (project / "keep.txt").write_text("keep\n")
    settings = Path(env["XDG_CONFIG_HOME"]) / "pitui" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"allow": {"bash": ["rm keep.txt"]}}))
    llm.script(
        tool_calls([("bash", {"command": "rm keep.txt"}), ("bash", {"command": "touch nope"})]),
        text("Deleted keep.txt; touch was refused."),
    )
    args = ["-p", "clean up", "--approve", "ask", *model_args(llm, sessions)]
    result = run_pitui(args, project, env)
    assert result.returncode == 0, result.stderr
    assert not (project / "keep.txt").exists() and not (project / "nope").exists()
    assert (
        "pitui: refused bash (touch nope): approval mode ask cannot ask in print mode; "
        "allow it in settings (allow) or pass --approve auto"
    ) in result.stderr
    [path] = session_files(sessions)
    entries = check_schema(path)
    customs = [(e["customType"], e["data"]) for e in entries if e["type"] == "custom"]
    assert [(t, d.get("by") or d.get("reason")) for t, d in customs] == [  # type: ignore[union-attr]
        ("pitui.approval", "allow-list"),
        ("pitui.checkpoint", "before-change"),
        ("pitui.approval", "no-prompt"),
        ("pitui.checkpoint", "after-run"),
    ]
    # The same store, read from here: `pitui checkpoints` lists the run's deletion.
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(key, env[key])
    from pitui.cli import main

    assert main(["checkpoints", str(path)]) == 0
    out = capsys.readouterr().out
    assert "after run       1 file(s): 1 deleted" in out and "      D keep.txt" in out
    assert "(pruned)" not in out


HOSTILE_REPLY = "ok \x1b]0;PWNED\x07\x1b[2J done \x9b31m\u202eevil"


def test_text_mode_never_passes_escapes_to_the_terminal(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    """A reply and a tool call full of escapes (split across chunks) come out inert; --json
    keeps the exact text, escaped by JSON."""
    unsafe = ("\x1b", "\x07", "\x9b", "\u202e")
    llm.script(
        tool_call("bash", {"command": "echo \x1b]0;title\x07hi"}),
        text(HOSTILE_REPLY, chunks=7),
    )
    result = run_pitui(["-p", "go", *model_args(llm, tmp_path / "s")], project, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok  done 31mevil\n"
    assert "[bash: echo hi]" in result.stderr
    for char in unsafe:
        assert char not in result.stdout and char not in result.stderr

    llm.script(text(HOSTILE_REPLY, chunks=7))
    result = run_pitui(["-p", "go", "--json", *model_args(llm, tmp_path / "j")], project, env)
    assert result.returncode == 0, result.stderr
    for char in unsafe:
        assert char not in result.stdout
    events = [json.loads(line) for line in result.stdout.splitlines()]
    deltas = "".join(e["text"] for e in events if e["type"] == "message_delta")
    assert deltas == HOSTILE_REPLY


def test_output_folder_only_when_output_is_saved(
    tmp_path: Path, project: Path, env: dict[str, str], llm: ScriptedLLMServer
) -> None:
    """A run whose commands print little leaves nothing in the temp dir; a long output is kept
    in a private folder that stays after exit."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**env, "TMPDIR": str(temp)}
    llm.script(tool_call("bash", {"command": "echo short"}), text("ok"))
    result = run_pitui(["-p", "go", *model_args(llm, tmp_path / "s")], project, env)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in temp.iterdir()) == []
    llm.script(tool_call("bash", {"command": "seq 1 100000"}), text("ok"))
    result = run_pitui(["-p", "go", *model_args(llm, tmp_path / "s")], project, env)
    assert result.returncode == 0, result.stderr
    [folder] = temp.iterdir()
    assert folder.name.startswith("pitui-output-")
    assert folder.stat().st_mode & 0o777 == 0o700
    [saved] = folder.iterdir()
    assert saved.stat().st_mode & 0o777 == 0o600
    assert saved.read_text().splitlines()[-1] == "100000"
