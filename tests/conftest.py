"""Shared fixtures for the test suite (plain pytest, no Textual)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fixtures import FIXTURES_DIR

from pitui.session import SessionStore

WriteSession = Callable[..., Path]
OpenSession = Callable[..., SessionStore]


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The real pi session files in ``tests/fixtures/`` (see its README)."""
    return FIXTURES_DIR


@pytest.fixture
def write_session(tmp_path: Path) -> WriteSession:
    """Write a session file by hand: ``write_session(entries, header=None, name=...)``.

    Entries are written one compact JSON object per line, exactly as given, after a v3 header
    (or the given header; ``header=False`` writes no header line).
    """

    def write(
        entries: list[dict[str, Any]],
        header: dict[str, Any] | bool | None = None,
        name: str = "session.jsonl",
    ) -> Path:
        if header is None:
            header = {
                "type": "session",
                "version": 3,
                "id": "test-session",
                "timestamp": "2025-01-01T00:00:00.000Z",
                "cwd": "/work/project",
            }
        lines = [] if header is False else [json.dumps(header, separators=(",", ":"))]
        lines.extend(json.dumps(e, separators=(",", ":")) for e in entries)
        path = tmp_path / name
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path

    return write


@pytest.fixture
def open_session() -> Iterator[OpenSession]:
    """Open stores that are closed again when the test ends."""
    opened: list[SessionStore] = []

    def open_(path: Path, **kwargs: Any) -> SessionStore:
        store = SessionStore.open(path, **kwargs)
        opened.append(store)
        return store

    yield open_
    for store in reversed(opened):
        store.close()


# --- Scripted OpenAI-compatible LLM server (see tests/support/llm_server.py) ----------------

from support.llm_server import ScriptedLLMServer, register_test_models  # noqa: E402


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLMServer]:
    """One scripted chat-completions server on 127.0.0.1 for the whole run (use ``llm``).

    Also registers the test model names (``test-model`` ...) with litellm at zero cost.
    """
    register_test_models()
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llm(llm_server: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    """The shared server, reset (empty script, no recordings, ids from ``call_1``).

    The test fails at teardown if a request got the "no scripted reply" 500, unless it set
    ``llm.fail_on_unscripted = False``.
    """
    llm_server.reset()
    yield llm_server
    unscripted = llm_server.unscripted
    if unscripted and llm_server.fail_on_unscripted:
        pytest.fail(
            f"the test LLM server got {len(unscripted)} request(s) with no scripted reply "
            f"(requests #{', #'.join(str(r.index) for r in unscripted)}); script more steps "
            "or set llm.fail_on_unscripted = False"
        )


@pytest.fixture(autouse=True)
def _isolated_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the developer's real config, data or state folders."""
    base = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(base / name.lower()))
    monkeypatch.delenv("PITUI_SESSION_DIR", raising=False)
