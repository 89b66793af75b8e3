"""Disk faults during a run, two processes on one session, and keys never written anywhere."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
from pathlib import Path

import pytest
from support.llm_server import ScriptedLLMServer, text, tool_call

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.export import export_html, export_jsonl
from pitui.session import ReadOnlySessionError, SessionStore
from pitui.session import writer as writer_module

SECRET = "sk-live-never-write-me-0123456789"


def make_agent(tmp_path: Path, llm: ScriptedLLMServer) -> AgentSession:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    return AgentSession(
        store,
        cwd=tmp_path,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=Settings.from_dict({"retry": {"baseDelayMs": 10}}),
    )


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EFBIG])
async def test_write_failure_mid_run_is_one_sentence_and_recoverable(
    tmp_path: Path, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    agent = make_agent(tmp_path, llm)
    llm.script(text("first answer"))
    assert (await agent.prompt("first")).ok
    path = agent.store.path
    assert path is not None
    before = path.read_bytes()
    entries_before = len(agent.store)
    real_write = os.write

    def failing(fd: int, data: bytes) -> int:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(writer_module.os, "write", failing)
    result = await agent.prompt("second")
    assert result.error is not None and result.error.kind == "storage"
    assert result.error.message.startswith("Could not save the session to ")
    assert result.error.message.endswith(".") and "\n" not in result.error.message
    assert path.read_bytes() == before
    assert len(agent.store) == entries_before
    # The cause goes away: appending works again.
    monkeypatch.setattr(writer_module.os, "write", real_write)
    llm.script(text("third answer"))
    assert (await agent.prompt("third")).ok
    reopened = SessionStore.open(path, read_only=True)
    texts = [m for m in reopened.project().messages if m.get("role") == "user"]
    assert texts[-1]["content"][0]["text"] == "third"
    assert not reopened.warnings


def _holder(path: str, ready: multiprocessing.synchronize.Event, count: int) -> None:
    store = SessionStore.open(path)
    assert not store.read_only
    ready.set()
    for i in range(count):
        store.append_message({"role": "user", "content": f"holder {i}", "timestamp": i})
    store.close()


def test_two_processes_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    store = SessionStore.create_at(path, str(tmp_path))
    store.append_message({"role": "user", "content": "start", "timestamp": 0})
    store.close()
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    holder = context.Process(target=_holder, args=(str(path), ready, 500))
    holder.start()
    assert ready.wait(30)
    second = SessionStore.open(path)
    refused = 0
    for i in range(500):
        try:
            second.append_message({"role": "user", "content": f"second {i}", "timestamp": i})
        except ReadOnlySessionError:
            refused += 1
    second.close()
    holder.join(60)
    assert holder.exitcode == 0
    assert refused == 500, "the second process must get the read-only view"
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    parsed = [json.loads(line) for line in lines[:-1]]
    assert len(parsed) == 1 + 1 + 500  # header, start, the holder's appends
    assert not any("second" in json.dumps(p) for p in parsed)


async def test_api_keys_never_reach_files_logs_or_exports(
    tmp_path: Path, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-a")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    agent = AgentSession(store, cwd=tmp_path, model="openai/test-model", api_base=f"{llm.url}/v1")
    llm.script(tool_call("bash", {"command": "echo hi"}), text("done"))
    assert (await agent.prompt("run it")).ok
    assert llm.requests[0].headers.get("authorization") == f"Bearer {SECRET}"  # it was used
    export_html(store, tmp_path / "out.html")
    export_jsonl(store, tmp_path / "out.jsonl")
    store.close()
    # An internal error log, if one exists, must not hold it either.
    from pitui.cli import _log_internal_error

    _log_internal_error(RuntimeError("boom"))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_bytes().decode("utf-8", "replace"), path


def test_session_files_0600_and_folders_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = SessionStore.create(tmp_path / "a" / "b", str(tmp_path))
        store.append_message({"role": "user", "content": "x", "timestamp": 1})
        store.close()
    finally:
        os.umask(old)
    assert store.path is not None
    assert store.path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700
