"""pi 1.6 continues a session pitui wrote with its thinking intact, checked with pi's own code:
its projection of the file, its ``transformMessages`` for the session's model (which drops the
thinking of any other model), and the request it would send next, which the same local server
that refuses a modified signature or a missing reasoning item must accept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.pi_check import pi_context
from support.providers import anthropic as anthropic_api
from support.providers import gemini as gemini_api
from support.providers import ollama as ollama_api
from support.providers import openai_responses as responses_api
from support.providers import openrouter as openrouter_api
from support.providers.base import RecordedRequest

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore


async def run_loop(tmp_path: Path, model: str, api_base: str, script: Any, server: Any) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "notes.txt").write_text("alpha\n")
    store = SessionStore.create(tmp_path / "sessions", str(project))
    agent = AgentSession(
        store, cwd=project, model=model, api_base=api_base, thinking="high", settings=Settings()
    )
    server.script(*script)
    result = await agent.prompt("what do my notes say?")
    assert result.ok, result.error
    path = store.path
    assert path is not None
    store.close()
    return Path(path)


def stored_assistants(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [
        e["message"]
        for e in lines
        if e.get("type") == "message" and e["message"].get("role") == "assistant"
    ]


def thinking_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b.get("type") == "thinking"]


def assert_pi_keeps_the_thinking(path: Path, pi: dict[str, Any]) -> None:
    mine = stored_assistants(path)
    theirs = [m for m in pi["transformed"] if m.get("role") == "assistant"]
    assert len(theirs) == len(mine)
    for stored, kept in zip(mine, theirs, strict=True):
        assert thinking_of(stored), "the loop was meant to think"
        assert thinking_of(kept) == thinking_of(stored)
        calls = [b for b in stored["content"] if b["type"] == "toolCall"]
        assert [b for b in kept["content"] if b["type"] == "toolCall"] == calls


def request(body: dict[str, Any], **headers: str) -> RecordedRequest:
    return RecordedRequest(0, "POST", "/", dict(headers), body, b"")


async def test_pi_continues_a_claude_session(
    tmp_path: Path, claude: anthropic_api.AnthropicServer
) -> None:
    A = anthropic_api
    script = [
        A.reply(
            A.Thinking("List first."),
            A.Redacted(),
            A.Text("Looking."),
            A.Thinking("Then read."),
            A.ToolUse("bash", {"command": "ls"}),
        ),
        A.reply(A.Thinking("Read it."), A.ToolUse("read", {"path": "notes.txt"})),
        A.reply(A.Thinking("Answer."), A.Text("It says alpha.")),
    ]
    path = await run_loop(tmp_path, "anthropic/claude-sonnet-4-5", claude.base_url, script, claude)
    pi = pi_context(path)
    assert pi["model"] == {
        "id": "claude-sonnet-4-5",
        "provider": "anthropic",
        "api": "anthropic-messages",
        "catalog": True,
    }
    assert_pi_keeps_the_thinking(path, pi)
    payload = pi["payload"]
    assert payload["thinking"]["type"] == "enabled" and payload["max_tokens"] == 64_000
    # pi's next request, with pitui's blocks, passes every check of the local Anthropic API.
    payload["messages"].append({"role": "user", "content": "and now?"})
    verdict = claude.check(
        request(payload, **{"x-api-key": anthropic_api.API_KEY, "anthropic-version": "2023-06-01"})
    )
    assert verdict is None, verdict
    sent = [b["type"] for b in payload["messages"][1]["content"]]
    assert sent == ["thinking", "redacted_thinking", "text", "thinking", "tool_use"]


async def test_pi_continues_an_openai_responses_session(
    tmp_path: Path, responses: responses_api.ResponsesServer
) -> None:
    R = responses_api
    script = [
        R.reply(R.Reasoning("List first."), R.FunctionCall("bash", {"command": "ls"})),
        R.reply(R.Reasoning("Answer."), R.Message("It says alpha.")),
    ]
    path = await run_loop(tmp_path, "openai/gpt-5.3-codex", responses.api_base, script, responses)
    pi = pi_context(path)
    assert pi["model"] == {
        "id": "gpt-5.3-codex",
        "provider": "openai",
        "api": "openai-responses",
        "catalog": True,
    }
    assert_pi_keeps_the_thinking(path, pi)
    payload = pi["payload"]
    assert payload["store"] is False and payload["include"] == ["reasoning.encrypted_content"]
    reasoning = [i for i in payload["input"] if i.get("type") == "reasoning"]
    assert len(reasoning) == 2 and all(responses.decrypt(i["encrypted_content"]) for i in reasoning)
    assert responses.check(request(payload, authorization=f"Bearer {R.API_KEY}")) is None


async def test_pi_continues_a_gemini_session(
    tmp_path: Path, gemini: gemini_api.GeminiServer
) -> None:
    G = gemini_api
    script = [
        G.reply(G.Thought("List first."), G.Call("bash", {"command": "ls"})),
        G.reply(G.Thought("Answer."), G.Text("It says alpha.")),
    ]
    path = await run_loop(tmp_path, "gemini/gemini-2.5-pro", gemini.api_base, script, gemini)
    pi = pi_context(path)
    assert pi["model"] == {
        "id": "gemini-2.5-pro",
        "provider": "google",
        "api": "google-generative-ai",
        "catalog": True,
    }
    assert_pi_keeps_the_thinking(path, pi)
    contents = pi["payload"]["contents"]
    calls = [p for c in contents for p in c["parts"] if "functionCall" in p]
    assert calls and all(
        gemini.verify(p["functionCall"]["name"], p["functionCall"]["args"], p["thoughtSignature"])
        for p in calls
    )
    assert gemini.check(request(pi["payload"], **{"x-goog-api-key": G.API_KEY})) is None
    # pitui's last request is pi's next one but for the reply it answered: the same turns and
    # parts, signatures, output limit, thinking, tools and system prompt.
    mine, config = gemini.last.body, pi["payload"]["config"]
    assert contents[: len(mine["contents"])] == mine["contents"]
    assert [c["role"] for c in contents[len(mine["contents"]) :]] == ["model"]
    assert mine["generationConfig"] == {
        "maxOutputTokens": config["maxOutputTokens"],
        "thinkingConfig": config["thinkingConfig"],
    }
    assert mine["tools"] == config["tools"]
    assert mine["systemInstruction"] == {"parts": [{"text": config["systemInstruction"]}]}


async def test_pi_continues_a_claude_via_openrouter_session(
    tmp_path: Path, openrouter: openrouter_api.OpenRouterServer
) -> None:
    orr = openrouter_api
    script = [
        orr.reply("Looking.", "List first.", [("bash", {"command": "ls"})]),
        orr.reply("It says alpha.", "Answer."),
    ]
    path = await run_loop(
        tmp_path, "openrouter/anthropic/claude-sonnet-4.5", openrouter.api_base, script, openrouter
    )
    pi = pi_context(path)
    assert pi["model"]["api"] == "anthropic-messages" and pi["model"]["provider"] == "openrouter"
    assert_pi_keeps_the_thinking(path, pi)
    blocks = [
        b
        for m in pi["payload"]["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "thinking"
    ]
    stored = [b for m in stored_assistants(path) for b in thinking_of(m)]
    assert [(b["thinking"], b["signature"]) for b in blocks] == [
        (b["thinking"], b["thinkingSignature"]) for b in stored
    ]
    assert [b["thinking"] for b in blocks] == ["List first.", "Answer."]
    assert all(openrouter.messages.verify(b["thinking"], b["signature"]) for b in blocks)
    # pi's next request passes the checks of OpenRouter's Messages endpoint.
    payload = pi["payload"]
    payload["messages"].append({"role": "user", "content": "and now?"})
    headers = {"authorization": "Bearer x", "anthropic-version": "2023-06-01"}
    verdict = openrouter.messages.check(request(payload, **headers))
    assert verdict is None, verdict


async def test_pi_continues_an_ollama_session(
    tmp_path: Path, ollama: ollama_api.OllamaServer
) -> None:
    L = ollama_api
    script = [
        L.reply(L.Think("List first."), L.Tool("bash", {"command": "ls"})),
        L.reply(L.Think("Answer."), L.Say("It says alpha.")),
    ]
    path = await run_loop(tmp_path, "ollama_chat/qwen3", ollama.api_base, script, ollama)
    pi = pi_context(path, f"{ollama.url}/v1")
    assert pi["model"]["provider"] == "ollama" and pi["model"]["api"] == "openai-completions"
    assert_pi_keeps_the_thinking(path, pi)
    sent = [m for m in pi["payload"]["messages"] if m["role"] == "assistant"]
    # pitui stores the field the thinking streamed in (Ollama's "reasoning"): pi sends it back
    # there, as pitui does.
    assert [m.get("reasoning") for m in sent] == ["List first.", "Answer."]
