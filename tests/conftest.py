"""Shared fixtures for the test suite (plain pytest, no Textual)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fixtures import FIXTURES_DIR
from support.slow_lane import (  # noqa: F401  (the fast lane's marks and its guard)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_call,
    pytest_runtest_protocol,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)

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


# --- Local provider servers (see tests/support/providers/) -----------------------------------

from support.providers.anthropic import API_KEY as ANTHROPIC_TEST_KEY  # noqa: E402
from support.providers.anthropic import AnthropicServer  # noqa: E402


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[AnthropicServer]:
    """One local Anthropic Messages server for the whole run (use ``claude``)."""
    server = AnthropicServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def claude(
    anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[AnthropicServer]:
    """The shared Anthropic server, reset, with ``ANTHROPIC_API_KEY`` set to its key."""
    anthropic_server.reset()
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_TEST_KEY)
    yield anthropic_server
    if anthropic_server.unscripted and anthropic_server.fail_on_unscripted:
        pytest.fail(
            f"the Anthropic server got {len(anthropic_server.unscripted)} unscripted request(s)"
        )


from support.providers.openai_responses import API_KEY as OPENAI_TEST_KEY  # noqa: E402
from support.providers.openai_responses import ResponsesServer  # noqa: E402


@pytest.fixture(scope="session")
def responses_server() -> Iterator[ResponsesServer]:
    """One local OpenAI Responses server for the whole run (use ``responses``)."""
    server = ResponsesServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def responses(
    responses_server: ResponsesServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ResponsesServer]:
    """The shared Responses server, reset, with ``OPENAI_API_KEY`` set to its key."""
    responses_server.reset()
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_TEST_KEY)
    yield responses_server
    if responses_server.unscripted and responses_server.fail_on_unscripted:
        pytest.fail(
            f"the Responses server got {len(responses_server.unscripted)} unscripted request(s)"
        )


from support.providers.gemini import API_KEY as GEMINI_TEST_KEY  # noqa: E402
from support.providers.gemini import GeminiServer  # noqa: E402


@pytest.fixture(scope="session")
def gemini_server() -> Iterator[GeminiServer]:
    """One local Gemini API server for the whole run (use ``gemini``)."""
    server = GeminiServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def gemini(gemini_server: GeminiServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiServer]:
    """The shared Gemini server, reset, with ``GEMINI_API_KEY`` set to its key."""
    gemini_server.reset()
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_TEST_KEY)
    yield gemini_server
    if gemini_server.unscripted and gemini_server.fail_on_unscripted:
        pytest.fail(f"the Gemini server got {len(gemini_server.unscripted)} unscripted request(s)")


from support.providers.ollama import OllamaServer  # noqa: E402


@pytest.fixture(scope="session")
def ollama_server() -> Iterator[OllamaServer]:
    """One local Ollama server for the whole run (use ``ollama``)."""
    server = OllamaServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def ollama(ollama_server: OllamaServer) -> Iterator[OllamaServer]:
    """The shared Ollama server, reset (and the windows it reported forgotten)."""
    from pitui.llm.local_models import forget_served_windows

    ollama_server.reset()
    forget_served_windows()
    yield ollama_server
    if ollama_server.unscripted and ollama_server.fail_on_unscripted:
        pytest.fail(f"the Ollama server got {len(ollama_server.unscripted)} unscripted request(s)")


from support.providers.openrouter import API_KEY as OPENROUTER_TEST_KEY  # noqa: E402
from support.providers.openrouter import OpenRouterServer  # noqa: E402


@pytest.fixture(scope="session")
def openrouter_server() -> Iterator[OpenRouterServer]:
    """One local OpenRouter for the whole run (use ``openrouter``)."""
    server = OpenRouterServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openrouter(
    openrouter_server: OpenRouterServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[OpenRouterServer]:
    """The shared OpenRouter server, reset, with ``OPENROUTER_API_KEY`` set to its key."""
    openrouter_server.reset()
    monkeypatch.setenv("OPENROUTER_API_KEY", OPENROUTER_TEST_KEY)
    yield openrouter_server
    if openrouter_server.unscripted and openrouter_server.fail_on_unscripted:
        pytest.fail(
            f"the OpenRouter server got {len(openrouter_server.unscripted)} unscripted request(s)"
        )
