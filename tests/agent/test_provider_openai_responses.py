"""The agent against the local OpenAI Responses server: encrypted reasoning requested, stored as
pi stores it and replayed statelessly (``store: false``) between tool calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.providers.openai_responses import (
    FunctionCall,
    Message,
    Reasoning,
    ResponsesServer,
    reply,
)

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore

FAST = {"retry": {"baseDelayMs": 10, "maxDelayMs": 50, "maxRetries": 2}}


def make_agent(
    tmp_path: Path, responses: ResponsesServer, model: str = "openai/gpt-5-codex", **settings: Any
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "notes.txt").write_text("alpha\n")
    store = SessionStore.create(tmp_path / "sessions", str(project))
    return AgentSession(
        store,
        cwd=project,
        model=model,
        api_base=responses.api_base,
        thinking="high",
        settings=Settings.from_dict({**FAST, **settings}),
    )


def assistants(agent: AgentSession) -> list[dict[str, Any]]:
    return [m for m in agent.store.project().messages if m.get("role") == "assistant"]


@pytest.mark.slow
async def test_reasoning_is_kept_and_replayed_between_tool_calls(
    tmp_path: Path, responses: ResponsesServer
) -> None:
    agent = make_agent(tmp_path, responses)
    responses.script(
        reply(Reasoning("List the folder."), FunctionCall("bash", {"command": "ls"})),
        reply(Reasoning("Now read notes."), FunctionCall("read", {"path": "notes.txt"})),
        reply(Reasoning("Answer."), Message("notes.txt says alpha.")),
    )
    result = await agent.prompt("what is in notes?")
    assert result.ok, result.error
    first, second, third = assistants(agent)
    for message in (first, second, third):
        assert (message["api"], message["provider"], message["model"]) == (
            "openai-responses",
            "openai",
            "gpt-5-codex",
        )
    thinking = first["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "List the folder."
    item = json.loads(thinking["thinkingSignature"])
    assert item["type"] == "reasoning" and item["id"].startswith("rs_")
    assert item["summary"] == [{"type": "summary_text", "text": "List the folder."}]
    assert responses.decrypt(item["encrypted_content"]) == {
        "id": item["id"],
        "summary": "List the folder.",
    }
    call = first["content"][1]
    assert call["type"] == "toolCall" and first["stopReason"] == "toolUse"
    # pi's ids: the call's call_id and its item's id, so either tool can pair the items again.
    call_id, item_id = call["id"].split("|")
    assert call_id.startswith("call_") and item_id.startswith("fc_")
    for request in responses.requests:
        assert request.body["store"] is False
        assert request.body["include"] == ["reasoning.encrypted_content"]
        assert request.body["reasoning"] == {"effort": "high", "summary": "auto"}
        assert request.body["max_output_tokens"] > 100_000  # the model's own output limit
    replayed = [i for i in responses.last.body["input"] if i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in replayed] == [
        json.loads(m["content"][0]["thinkingSignature"])["encrypted_content"]
        for m in (first, second)
    ]
    text = third["content"][-1]
    assert (text["type"], text["text"]) == ("text", "notes.txt says alpha.")
    assert json.loads(text["textSignature"]) == {"v": 1, "id": responses.outputs[2][1]["id"]}


async def test_reasoning_of_another_model_is_not_sent(
    tmp_path: Path, responses: ResponsesServer
) -> None:
    other = "openai/responses/gpt-5.1-codex"
    agent = make_agent(tmp_path, responses, models={other: {"apiBase": responses.api_base}})
    responses.script(reply(Reasoning("Think."), Message("Hi.")))
    assert (await agent.prompt("hi")).ok
    agent.set_model(other)
    responses.script(reply(Message("Hello again.")))
    assert (await agent.prompt("again")).ok
    assert not [i for i in responses.last.body["input"] if i.get("type") == "reasoning"]
    assert assistants(agent)[-1]["model"] == "gpt-5.1-codex"


async def test_content_filter_is_an_error(tmp_path: Path, responses: ResponsesServer) -> None:
    agent = make_agent(tmp_path, responses)
    responses.script(reply(Message("No"), incomplete="content_filter"))
    result = await agent.prompt("bad")
    (message,) = assistants(agent)
    assert message["stopReason"] == "error" and message["errorMessage"]
    assert result.error is not None and result.error.kind == "refused"
