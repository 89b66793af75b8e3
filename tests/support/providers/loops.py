"""Thinking tool loops scripted for every local provider server: three replies (``bash ls``,
``read notes.txt``, the answer "They say alpha."), each with thinking. Used by the print-mode and
TUI tests, which run the same loop against each server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from support.providers import anthropic as anthropic_api
from support.providers import gemini as gemini_api
from support.providers import ollama as ollama_api
from support.providers import openai_responses as responses_api
from support.providers import openrouter as openrouter_api

ANSWER = "They say alpha."


def claude_loop(server: Any) -> None:
    A = anthropic_api
    server.script(
        A.reply(A.Thinking("List."), A.Redacted(), A.ToolUse("bash", {"command": "ls"})),
        A.reply(A.Thinking("Read."), A.ToolUse("read", {"path": "notes.txt"})),
        A.reply(A.Thinking("Answer."), A.Text(ANSWER)),
    )


def responses_loop(server: Any) -> None:
    R = responses_api
    server.script(
        R.reply(R.Reasoning("List."), R.FunctionCall("bash", {"command": "ls"})),
        R.reply(R.Reasoning("Read."), R.FunctionCall("read", {"path": "notes.txt"})),
        R.reply(R.Reasoning("Answer."), R.Message(ANSWER)),
    )


def gemini_loop(server: Any) -> None:
    G = gemini_api
    server.script(
        G.reply(G.Thought("List."), G.Call("bash", {"command": "ls"})),
        G.reply(G.Thought("Read."), G.Call("read", {"path": "notes.txt"})),
        G.reply(G.Thought("Answer."), G.Text(ANSWER)),
    )


def ollama_loop(server: Any) -> None:
    L = ollama_api
    server.script(
        L.reply(L.Think("List."), L.Tool("bash", {"command": "ls"})),
        L.reply(L.Think("Read."), L.Tool("read", {"path": "notes.txt"})),
        L.reply(L.Think("Answer."), L.Say(ANSWER)),
    )


def openrouter_loop(server: Any) -> None:
    orr = openrouter_api
    server.script(
        orr.reply("", "List.", [("bash", {"command": "ls"})]),
        orr.reply("", "Read.", [("read", {"path": "notes.txt"})]),
        orr.reply(ANSWER, "Answer."),
    )


@dataclass(frozen=True)
class Loop:
    model: str
    fixture: str
    """The pytest fixture of the server (``claude``, ``responses``, ...)."""
    script: Callable[[Any], None]
    names: tuple[str, str, str]
    """The stored (api, provider, model) pi uses for it."""

    def api_base(self, server: Any) -> str:
        return str(getattr(server, "base_url", None) or server.api_base)


LOOPS = {
    "claude": Loop(
        "anthropic/claude-sonnet-4-5",
        "claude",
        claude_loop,
        ("anthropic-messages", "anthropic", "claude-sonnet-4-5"),
    ),
    "responses": Loop(
        "openai/gpt-5-codex",
        "responses",
        responses_loop,
        ("openai-responses", "openai", "gpt-5-codex"),
    ),
    "gemini": Loop(
        "gemini/gemini-2.5-pro",
        "gemini",
        gemini_loop,
        ("google-generative-ai", "google", "gemini-2.5-pro"),
    ),
    "ollama": Loop(
        "ollama_chat/qwen3", "ollama", ollama_loop, ("openai-completions", "ollama", "qwen3")
    ),
    "openrouter": Loop(
        "openrouter/anthropic/claude-sonnet-4.5",
        "openrouter",
        openrouter_loop,
        ("anthropic-messages", "openrouter", "anthropic/claude-sonnet-4.5"),
    ),
}
