"""Which wire protocol serves a model, and the names pi 1.6 stores for it.

A :class:`Route` answers, for one model (and the API base it is used with):

* ``family``: how replies and history travel (signed Claude thinking blocks, OpenAI Responses
  reasoning items, Gemini thought signatures, an OpenAI-compatible chat endpoint, Ollama's
  ``/api/chat``, OpenRouter);
* ``api``, ``provider``, ``model_id``: what an assistant message records, with pi's own names
  (``anthropic-messages``, ``openai-responses``, ``google-generative-ai`` ...; ``google`` for
  Gemini), so pi 1.6 recognises a pitui reply as its model's own and keeps its thinking;
* ``litellm_model``: the model string litellm is called with.
"""

from __future__ import annotations

from dataclasses import dataclass

from pitui.llm.models import ModelInfo, ModelRef

ANTHROPIC = "anthropic"
OPENAI_RESPONSES = "openai-responses"
OPENAI_CHAT = "openai-chat"
GEMINI = "gemini"
OLLAMA = "ollama"
OPENROUTER = "openrouter"

#: pi's api name per family (Bedrock and Vertex have their own, see :func:`route`).
PI_API = {
    ANTHROPIC: "anthropic-messages",
    OPENAI_RESPONSES: "openai-responses",
    OPENAI_CHAT: "openai-completions",
    GEMINI: "google-generative-ai",
    OLLAMA: "openai-completions",
    OPENROUTER: "openai-completions",
}

#: api names an older pitui wrote (``litellm``) count as the provider's own.
LEGACY_APIS = frozenset({"litellm"})


@dataclass(frozen=True)
class Route:
    family: str
    api: str
    provider: str
    model_id: str
    litellm_model: str
    claude: bool = False
    """An Anthropic model (wherever served): prompt caching with ``cache_control``."""

    def owns(self, message: dict[str, object]) -> bool:
        """Whether a stored assistant message came from this very model (pi's rule: same
        provider, api and model), so its signatures and encrypted reasoning can go back."""
        api = message.get("api")
        return (
            message.get("provider") == self.provider
            and message.get("model") == self.model_id
            and (api == self.api or api in LEGACY_APIS)
        )


def _is_claude(model_id: str) -> bool:
    return "claude" in model_id.lower()


def route(info: ModelInfo, api_base: str | None = None) -> Route:
    """How ``info``'s model is served (``api_base``: a custom endpoint it is used with)."""
    ref = info.ref.for_litellm
    provider, model_id = ref.provider, ref.model_id
    pi_provider = info.ref.pi_provider
    claude = _is_claude(model_id)
    name = ref.litellm_name
    if provider == "anthropic":
        return Route(ANTHROPIC, PI_API[ANTHROPIC], "anthropic", model_id, name, True)
    if provider == "bedrock" and claude:
        return Route(ANTHROPIC, "bedrock-converse-stream", pi_provider, model_id, name, True)
    if provider == "vertex_ai" and claude:
        return Route(ANTHROPIC, PI_API[ANTHROPIC], pi_provider, model_id, name, True)
    if provider in ("gemini", "vertex_ai"):
        api = "google-vertex" if provider == "vertex_ai" else PI_API[GEMINI]
        return Route(GEMINI, api, pi_provider, model_id, name)
    if provider in ("ollama", "ollama_chat"):
        return Route(OLLAMA, PI_API[OLLAMA], "ollama", model_id, f"ollama_chat/{model_id}")
    if provider == "openrouter":
        # pi serves Claude on OpenRouter with the Messages API: the thinking is stored in its
        # shape (each signed block), and travels as OpenRouter's reasoning_details here.
        api = PI_API[ANTHROPIC] if claude else PI_API[OPENROUTER]
        return Route(OPENROUTER, api, "openrouter", model_id, name, claude)
    if provider == "openai":
        bare = model_id.removeprefix("responses/")
        responses = (
            model_id.startswith("responses/")
            or info.mode == "responses"
            or (api_base is None and info.supports_reasoning)
        )
        if responses:
            family = OPENAI_RESPONSES
            return Route(family, PI_API[family], "openai", bare, f"openai/responses/{bare}")
    return Route(OPENAI_CHAT, PI_API[OPENAI_CHAT], pi_provider, model_id, name)


def route_for(ref: ModelRef | str, api_base: str | None = None) -> Route:
    """:func:`route` for a bare model name (no table lookup beyond the model's mode)."""
    from pitui.llm.models import model_info

    parsed = ModelRef.parse(ref) if isinstance(ref, str) else ref
    return route(model_info(parsed), api_base)
