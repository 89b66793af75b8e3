"""How a model is served: which wire API, at which endpoint, with which provider quirks.

A :class:`Route` answers, for one model (and the API base it is used with):

* ``api``: the wire protocol, with pi 1.6's names. pitui speaks four of them itself
  (:data:`NATIVE_APIS`: ``anthropic-messages``, ``openai-completions``, ``openai-responses``,
  ``google-generative-ai``); every other provider (Bedrock, Vertex, Azure, Mistral, ...) goes
  through litellm (``native`` is False), imported only then;
* ``provider``, ``model_id``: what an assistant message records, with pi's own names
  (``google`` for Gemini, ``ollama`` ...), so pi 1.6 recognises a pitui reply as its model's own
  and keeps its thinking;
* ``base_url``: the endpoint root the API's paths are appended to;
* ``compat``: how this provider differs from its API's reference behaviour, as typed flags
  (pi's compat schema, the part pitui needs), so no module branches on a provider's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pitui.llm.models import ModelInfo, ModelRef

ANTHROPIC_MESSAGES = "anthropic-messages"
OPENAI_COMPLETIONS = "openai-completions"
OPENAI_RESPONSES = "openai-responses"
GOOGLE_GENERATIVE_AI = "google-generative-ai"
NATIVE_APIS = (ANTHROPIC_MESSAGES, OPENAI_COMPLETIONS, OPENAI_RESPONSES, GOOGLE_GENERATIVE_AI)

#: api names an older pitui wrote (``litellm``) count as the provider's own.
LEGACY_APIS = frozenset({"litellm"})

ANTHROPIC_BASE = "https://api.anthropic.com"
OPENAI_BASE = "https://api.openai.com/v1"
GOOGLE_BASE = "https://generativelanguage.googleapis.com/v1beta"
OPENROUTER_BASE = "https://openrouter.ai/api/v1"
OPENROUTER_ANTHROPIC_BASE = "https://openrouter.ai/api"
OLLAMA_BASE = "http://localhost:11434"

#: OpenAI-compatible chat endpoints, by litellm's provider prefix (pi serves these providers
#: with ``openai-completions`` too). ``None``: the provider has no public endpoint (a base URL
#: must be given).
CHAT_BASES: dict[str, str | None] = {
    "openai": OPENAI_BASE,
    "openrouter": OPENROUTER_BASE,
    "groq": "https://api.groq.com/openai/v1",
    "xai": "https://api.x.ai/v1",
    "deepseek": "https://api.deepseek.com",
    "cerebras": "https://api.cerebras.ai/v1",
    "together_ai": "https://api.together.xyz/v1",
    "fireworks_ai": "https://api.fireworks.ai/inference/v1",
    "moonshot": "https://api.moonshot.ai/v1",
    "lm_studio": "http://localhost:1234/v1",
    "llamafile": "http://localhost:8080/v1",
    "hosted_vllm": None,
}
OLLAMA_PROVIDERS = frozenset({"ollama", "ollama_chat"})

#: Hosts that take ``max_tokens`` only (pi's detection; OpenAI's own API wants
#: ``max_completion_tokens``).
_MAX_TOKENS_HOSTS = ("deepseek.com", "moonshot.", "together.", "integrate.api.nvidia.com")
#: Hosts that refuse ``reasoning_effort``.
_NO_EFFORT_HOSTS = ("api.x.ai", "moonshot.", "together.")

ReasoningRequest = Literal["effort", "openrouter", "none"]
ReasoningReplay = Literal["none", "field", "details"]


@dataclass(frozen=True)
class Compat:
    """Where a provider differs from its API's reference behaviour (pi's compat flags)."""

    # -- openai-completions
    developer_role: bool = False
    """The system prompt of a reasoning model goes as a ``developer`` message (OpenAI's API)."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """The output limit's field name."""
    tool_result_name: bool = False
    """Tool results carry the tool's ``name``."""
    reasoning_request: ReasoningRequest = "effort"
    """How thinking is asked for: ``reasoning_effort``, OpenRouter's ``reasoning`` object, or
    not at all."""
    reasoning_replay: ReasoningReplay = "none"
    """How a reply's own reasoning goes back to its model: not at all, in the field it
    streamed in (``reasoning_content``, Ollama and DeepSeek), or as OpenRouter's
    ``reasoning_details``."""
    usage_in_stream: bool = True
    """``stream_options.include_usage`` is sent (the usage arrives in the last chunk)."""
    reported_cost: bool = False
    """The provider reports what it billed (OpenRouter's ``usage.cost``): it is stored."""
    # -- anthropic-messages
    adaptive_thinking: bool = False
    """Thinking is ``{"type": "adaptive"}`` with an effort (Claude 4.6 and later): budgets are
    deprecated there and refused from 4.7 on."""
    interleaved_thinking: bool = False
    """Budget thinking between tool calls needs the ``interleaved-thinking`` beta header."""
    bearer_auth: bool = False
    """The key goes in ``Authorization: Bearer`` (OpenRouter's Messages endpoint) instead of
    ``x-api-key``."""
    # -- openai-responses
    encrypted_reasoning: bool = True
    """Reasoning is replayed statelessly: ``store: false`` and its encrypted content."""


@dataclass(frozen=True)
class Route:
    api: str
    provider: str
    model_id: str
    base_url: str | None = None
    """The endpoint root (native APIs); ``None`` for litellm's routes."""
    native: bool = True
    """Spoken by pitui itself; False: through litellm (imported for it, off the event loop)."""
    litellm_model: str = ""
    """The model string litellm is called with (litellm routes)."""
    claude: bool = False
    """An Anthropic model (wherever served): prompt caching with ``cache_control``."""
    reasoning: bool = False
    """The model thinks when asked (the model table's, or a custom model's ``reasoning``)."""
    compat: Compat = field(default_factory=Compat)

    def owns(self, message: dict[str, object]) -> bool:
        """Whether a stored assistant message came from this very model (pi's rule: same
        provider, api and model), so its signatures and encrypted reasoning can go back."""
        api = message.get("api")
        return (
            message.get("provider") == self.provider
            and message.get("model") == self.model_id
            and (api == self.api or api in LEGACY_APIS)
        )


def is_claude(model_id: str) -> bool:
    return "claude" in model_id.lower()


_CLAUDE_VERSION = re.compile(r"claude-(?:(?P<kind>[a-z]+)-)?(?P<major>\d+)(?:[-.](?P<minor>\d))?")


def claude_is_adaptive(model_id: str) -> bool:
    """Claude 4.6 and later think adaptively (``thinking: {"type": "adaptive"}`` with an
    effort), as pi 1.6 marks them; earlier ones take a token budget."""
    name = model_id.lower().rsplit("/", 1)[-1]
    if "fable" in name or name.endswith("-latest"):
        return True
    match = _CLAUDE_VERSION.search(name)
    if match is None or not match.group("kind"):
        return False  # claude-3-7-sonnet and older
    major = int(match.group("major"))
    minor = int(match.group("minor") or 0)
    return (major, minor) >= (4, 6)


#: The providers always served through litellm, with the api name stored for them (what
#: litellm speaks to them: Bedrock's Converse, Vertex's Gemini, OpenAI-style chat for the rest).
LITELLM_APIS = {
    "bedrock": "bedrock-converse-stream",
    "vertex_ai": "google-vertex",
    "azure": OPENAI_COMPLETIONS,
    "azure_ai": OPENAI_COMPLETIONS,
    "mistral": OPENAI_COMPLETIONS,
    "cohere": OPENAI_COMPLETIONS,
    "cohere_chat": OPENAI_COMPLETIONS,
    "perplexity": OPENAI_COMPLETIONS,
    "dashscope": OPENAI_COMPLETIONS,
    "sagemaker": OPENAI_COMPLETIONS,
    "watsonx": OPENAI_COMPLETIONS,
    "databricks": OPENAI_COMPLETIONS,
}


def _host_has(base: str | None, needles: tuple[str, ...]) -> bool:
    return base is not None and any(needle in base for needle in needles)


def _claude_compat(model_id: str, *, openrouter: bool = False) -> Compat:
    """Claude's thinking flags; through OpenRouter, its bearer key and billed cost too."""
    adaptive = claude_is_adaptive(model_id)
    return Compat(
        adaptive_thinking=adaptive,
        interleaved_thinking=not adaptive,
        bearer_auth=openrouter,
        reported_cost=openrouter,
    )


def _chat_compat(provider: str, base: str | None, info: ModelInfo) -> Compat:
    openai = provider == "openai" and (base is None or "api.openai.com" in base)
    if provider == "openrouter":
        return Compat(
            max_tokens_field="max_tokens",
            reasoning_request="openrouter",
            reasoning_replay="details",
            reported_cost=True,
        )
    if provider in OLLAMA_PROVIDERS:
        return Compat(reasoning_replay="field")
    return Compat(
        developer_role=openai and info.supports_reasoning,
        max_tokens_field="max_completion_tokens" if openai else "max_tokens",
        reasoning_request="none" if _host_has(base, _NO_EFFORT_HOSTS) else "effort",
        reasoning_replay="field" if provider == "deepseek" else "none",
    )


def _ollama_root(api_base: str | None) -> str:
    """Ollama's server root (its OpenAI-compatible API is under ``/v1``)."""
    root = (api_base or OLLAMA_BASE).rstrip("/")
    return root.removesuffix("/v1")


@dataclass(frozen=True)
class _Ask:
    """What a route is chosen from."""

    info: ModelInfo
    provider: str  # litellm's prefix
    model_id: str
    base: str | None  # the API base given, without a trailing slash
    api: str | None  # the wire API the settings name

    @property
    def pi_provider(self) -> str:
        return self.info.ref.pi_provider

    @property
    def claude(self) -> bool:
        return is_claude(self.model_id)

    @property
    def reasoning(self) -> bool:
        return self.info.supports_reasoning


def _anthropic(ask: _Ask) -> Route | None:
    if ask.provider != "anthropic" and ask.api != ANTHROPIC_MESSAGES:
        return None
    return Route(
        ANTHROPIC_MESSAGES,
        ask.pi_provider or "anthropic",
        ask.model_id,
        ask.base.removesuffix("/v1") if ask.base else ANTHROPIC_BASE,
        claude=True,
        reasoning=ask.reasoning,
        compat=_claude_compat(ask.model_id),
    )


def _google(ask: _Ask) -> Route | None:
    if ask.provider != "gemini" and ask.api != GOOGLE_GENERATIVE_AI:
        return None
    return Route(
        GOOGLE_GENERATIVE_AI,
        ask.pi_provider or "google",
        ask.model_id,
        ask.base or GOOGLE_BASE,
        reasoning=ask.reasoning,
    )


def _openrouter_claude(ask: _Ask) -> Route | None:
    """pi serves Claude on OpenRouter with the Messages API (OpenRouter's /api/v1/messages):
    thinking and text come back as Claude's own signed blocks, in stream order."""
    if ask.provider != "openrouter" or not ask.claude or ask.api == OPENAI_COMPLETIONS:
        return None
    return Route(
        ANTHROPIC_MESSAGES,
        "openrouter",
        ask.model_id,
        ask.base.removesuffix("/v1") if ask.base else OPENROUTER_ANTHROPIC_BASE,
        claude=True,
        reasoning=ask.reasoning,
        compat=_claude_compat(ask.model_id, openrouter=True),
    )


def _responses(ask: _Ask) -> Route | None:
    """OpenAI's reasoning models, and those the table says speak the Responses API."""
    if ask.api == OPENAI_RESPONSES:
        chosen = True
    elif ask.provider != "openai" or ask.api is not None:
        return None
    else:
        chosen = (
            ask.model_id.startswith("responses/")
            or ask.info.mode == "responses"
            or (ask.base is None and ask.reasoning)
        )
    if not chosen:
        return None
    return Route(
        OPENAI_RESPONSES,
        ask.pi_provider or "openai",
        ask.model_id.removeprefix("responses/"),
        ask.base or OPENAI_BASE,
        reasoning=ask.reasoning,
    )


def _ollama(ask: _Ask) -> Route | None:
    if ask.provider not in OLLAMA_PROVIDERS:
        return None
    return Route(
        OPENAI_COMPLETIONS,
        "ollama",
        ask.model_id,
        _ollama_root(ask.base) + "/v1",
        reasoning=True,  # local models are in no table: the user's --thinking is taken as said
        compat=_chat_compat(ask.provider, ask.base, ask.info),
    )


def _chat(ask: _Ask) -> Route | None:
    """OpenAI chat completions: a provider with a known endpoint, or any API base."""
    endpoint = ask.base or CHAT_BASES.get(ask.provider)
    if endpoint is None:
        return None
    return Route(
        OPENAI_COMPLETIONS,
        ask.pi_provider,
        ask.model_id,
        endpoint,
        claude=ask.claude and ask.provider == "openrouter",
        reasoning=ask.reasoning,
        compat=_chat_compat(ask.provider, endpoint, ask.info),
    )


_NATIVE = (_anthropic, _google, _openrouter_claude, _responses, _ollama, _chat)
"""The native routes, in the order they are tried (the first that serves the model wins)."""


def route(info: ModelInfo, api_base: str | None = None, api: str | None = None) -> Route:
    """How ``info``'s model is served (``api_base``: a custom endpoint it is used with; ``api``:
    the wire API a model's settings name, or ``litellm`` to go through litellm)."""
    ref = info.ref.for_litellm
    if api == "litellm" or (api is None and ref.provider in LITELLM_APIS):
        return _litellm_route(info, is_claude(ref.model_id))
    base = api_base.rstrip("/") if api_base else None
    ask = _Ask(info, ref.provider, ref.model_id, base, api)
    for serve in _NATIVE:
        found = serve(ask)
        if found is not None:
            return found
    return _litellm_route(info, ask.claude)


def _litellm_route(info: ModelInfo, claude: bool) -> Route:
    ref = info.ref.for_litellm
    provider = ref.provider
    api = LITELLM_APIS.get(provider, OPENAI_COMPLETIONS)
    if provider == "vertex_ai" and claude:
        api = ANTHROPIC_MESSAGES
    name = ref.litellm_name
    if provider in OLLAMA_PROVIDERS:
        name = f"ollama_chat/{ref.model_id}"
    return Route(
        api,
        info.ref.pi_provider,
        ref.model_id,
        native=False,
        litellm_model=name,
        claude=claude,
        reasoning=info.supports_reasoning or provider in OLLAMA_PROVIDERS,
    )


def route_for(ref: ModelRef | str, api_base: str | None = None) -> Route:
    """:func:`route` for a bare model name (no settings beyond the model table)."""
    from pitui.llm.models import model_info

    parsed = ModelRef.parse(ref) if isinstance(ref, str) else ref
    return route(model_info(parsed), api_base)
