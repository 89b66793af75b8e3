"""Which environment variable holds each provider's API key, and checking it before a request.

Keys are only ever read from the environment and passed to litellm; they are never written to a
session, a log or an export.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pitui.llm.models import ModelRef

KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "cohere": ("COHERE_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
    "azure": ("AZURE_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "dashscope": ("DASHSCOPE_API_KEY",),
}
# Local servers need no key.
KEYLESS = frozenset({"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "llamafile"})
PLACEHOLDER_KEY = "sk-no-key-required"


@dataclass(frozen=True)
class KeyCheck:
    api_key: str | None
    """The key to pass to litellm (None: let litellm find the provider's own credentials)."""
    problem: str | None
    """One sentence saying what to set, when a request cannot be made."""


def key_variable(ref: ModelRef) -> str | None:
    """The environment variable holding ``ref``'s provider key (``ANTHROPIC_API_KEY``, ...)."""
    names = KEY_VARIABLES.get(ref.for_litellm.provider)
    return names[0] if names else None


def check_key(ref: ModelRef, api_base: str | None) -> KeyCheck:
    """Find the key for ``ref`` before the first request; say which variable to set if missing."""
    ref = ref.for_litellm
    names = KEY_VARIABLES.get(ref.provider)
    if names:
        for name in names:
            value = os.environ.get(name)
            if value:
                return KeyCheck(value, None)
    if api_base:
        # Any OpenAI-compatible server: many need no key, litellm insists on one.
        return KeyCheck(PLACEHOLDER_KEY, None)
    if ref.provider in KEYLESS:
        return KeyCheck(None, None)
    if names:
        return KeyCheck(None, f"No API key for {ref.provider}: set {names[0]} in the environment.")
    if not ref.provider:
        return KeyCheck(
            None,
            f"Model {ref.model_id!r} has no provider: use provider/model, for example "
            "anthropic/claude-sonnet-4-5 or openai/gpt-4.1.",
        )
    # Providers with their own credential chains (bedrock, vertex_ai, ...): leave it to litellm.
    return KeyCheck(None, None)
