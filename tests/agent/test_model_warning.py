"""A pi session whose model litellm does not know opens fine and says so before a request."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitui.agent.session import AgentSession
from pitui.session import SessionStore


def test_unknown_recorded_model_is_flagged_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    store = SessionStore.in_memory(str(tmp_path))
    store.append_model_change("anthropic", "claude-from-the-future")
    agent = AgentSession(store, cwd=tmp_path)
    assert agent.model_name == "anthropic/claude-from-the-future"
    assert agent.problem() is None  # requests are still allowed
    warning = agent.model_warning()
    assert warning is not None and "--model" in warning and "not in the model table" in warning
    agent.set_model("anthropic/claude-sonnet-4-5")
    assert agent.model_warning() is None
    # Any OpenAI-compatible server (an api base) may serve names litellm has never heard of.
    other = AgentSession(store, cwd=tmp_path, model="openai/local-x", api_base="http://h/v1")
    assert other.model_warning() is None
