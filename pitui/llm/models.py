"""Model names and what we know about them (context window, output limit, prices, thinking).

The figures come from the JSON table litellm ships, read directly (about 15 ms: only the
fields used here are decoded) without importing litellm, so the status line can show the
context gauge at once, and from pitui's own entries (:data:`OWN_TABLE`, ``own_models.json``
next to this module, in litellm's field names). pitui's entries are corrections and additions:
models litellm's table lacks (``gemini/gemini-3-pro-preview``, Gemini 4 models pi 1.6 knows),
fields it lacks (the thinking levels a Gemini model takes, ``thinking_levels``) and figures it
has wrong (an output limit equal to the context window), so where both name a model, pitui's
fields win, one by one, over litellm's, and litellm's other fields stay. An entry there is
meant to go once litellm's table agrees. Settings can override any field under
``models["provider/model"]``.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

TABLE_NAME = "model_prices_and_context_window_backup.json"
OWN_TABLE = Path(__file__).with_name("own_models.json")


class _TableEntry(TypedDict, total=False):
    """The fields of a model table entry that pitui reads (the rest is skipped unparsed)."""

    max_input_tokens: Any
    max_tokens: Any
    max_output_tokens: Any
    input_cost_per_token: Any
    output_cost_per_token: Any
    cache_read_input_token_cost: Any
    cache_creation_input_token_cost: Any
    supports_reasoning: Any
    mode: Any
    thinking_levels: Any
    """pitui's own field: the thinking levels the model takes (Gemini's ``thinkingLevel``)."""


#: litellm's provider prefix -> the provider name pi 1.6 stores (where they differ).
PI_PROVIDER_NAMES: dict[str, str] = {
    "gemini": "google",
    "vertex_ai": "google-vertex",
    "bedrock": "amazon-bedrock",
    "ollama_chat": "ollama",
    "together_ai": "together",
    "fireworks_ai": "fireworks",
    "lm_studio": "lmstudio",
    "hosted_vllm": "vllm",
}
#: pi's provider name -> the litellm prefix that serves it (the reverse of the above).
LITELLM_PROVIDER_NAMES: dict[str, str] = {
    "google": "gemini",
    "google-vertex": "vertex_ai",
    "amazon-bedrock": "bedrock",
    "ollama": "ollama_chat",
    "together": "together_ai",
    "fireworks": "fireworks_ai",
    "lmstudio": "lm_studio",
    "vllm": "hosted_vllm",
}


@dataclass(frozen=True)
class ModelRef:
    """A model string split as pi stores it: ``provider`` before the first ``/``.

    The provider may be litellm's prefix (``gemini``, ``ollama_chat``) or pi's name for it
    (``google``, ``ollama``, as found in pi's sessions); :attr:`for_litellm` and
    :attr:`pi_provider` give either spelling.
    """

    provider: str
    model_id: str

    @classmethod
    def parse(cls, value: str) -> ModelRef:
        value = value.strip()
        if "/" in value:
            provider, model_id = value.split("/", 1)
            return cls(provider, model_id)
        return cls("openai" if value.startswith(("gpt-", "o1", "o3", "o4")) else "", value)

    @property
    def litellm_name(self) -> str:
        return f"{self.provider}/{self.model_id}" if self.provider else self.model_id

    @property
    def for_litellm(self) -> ModelRef:
        """The same model with litellm's provider prefix (``google`` -> ``gemini``, ...)."""
        provider = LITELLM_PROVIDER_NAMES.get(self.provider, self.provider)
        return self if provider == self.provider else ModelRef(provider, self.model_id)

    @property
    def pi_provider(self) -> str:
        return PI_PROVIDER_NAMES.get(self.provider, self.provider)

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling of this model (as typed, litellm's, pi's): settings keys."""
        spellings = [self.litellm_name, self.for_litellm.litellm_name]
        if self.provider:
            spellings.append(f"{self.pi_provider}/{self.model_id}")
        if self.provider == "ollama_chat":
            spellings.append(f"ollama/{self.model_id}")
        return tuple(dict.fromkeys(spellings))

    def __str__(self) -> str:
        return self.litellm_name


@dataclass(frozen=True)
class ModelInfo:
    ref: ModelRef
    context_window: int | None = None
    max_output: int | None = None
    input_cost: float = 0.0
    output_cost: float = 0.0
    cache_read_cost: float = 0.0
    cache_write_cost: float = 0.0
    supports_reasoning: bool = False
    known: bool = False
    mode: str | None = None
    """litellm's ``mode`` for the model (``responses`` routes it to the Responses API)."""
    thinking_levels: tuple[str, ...] = ()
    """The thinking levels the model takes, lowest first, where it takes only some (Gemini 3
    and later); empty: any level."""

    def cost(self, usage: dict[str, Any]) -> dict[str, float]:
        """pi's usage ``cost`` block for token counts ``input/output/cacheRead/cacheWrite``."""
        parts = {
            "input": usage.get("input", 0) * self.input_cost,
            "output": usage.get("output", 0) * self.output_cost,
            "cacheRead": usage.get("cacheRead", 0) * self.cache_read_cost,
            "cacheWrite": usage.get("cacheWrite", 0) * self.cache_write_cost,
        }
        parts["total"] = sum(parts.values())
        return parts


def table_path() -> Path | None:
    """Where litellm's model table lives (found without importing litellm)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / TABLE_NAME
    return path if path.is_file() else None


def _decode_table(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    import msgspec

    # On the path to the first frame (the status line's gauge): decoding only the fields
    # read here takes half the time of a whole parse of the 3.5 MB table, and a tenth of
    # the objects. An entry that is not an object fails it: then the whole table is parsed.
    try:
        return msgspec.json.decode(raw, type=dict[str, _TableEntry])
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass
    import orjson

    try:
        data = orjson.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=1)
def litellm_table() -> dict[str, Any]:
    """litellm's table alone (the fields pitui reads)."""
    return _decode_table(table_path())


@lru_cache(maxsize=1)
def own_table() -> dict[str, Any]:
    """pitui's own entries (``own_models.json``)."""
    return _decode_table(OWN_TABLE)


@lru_cache(maxsize=1)
def model_table() -> dict[str, Any]:
    """litellm's table with pitui's own entries merged over it, field by field."""
    own = own_table()
    table = litellm_table()
    if not own:
        return table
    merged = dict(table)
    for name, entry in own.items():
        if isinstance(entry, dict):
            base = merged.get(name)
            merged[name] = {**base, **entry} if isinstance(base, dict) else dict(entry)
    return merged


def _entry_for(ref: ModelRef) -> dict[str, Any] | None:
    table = model_table()
    ref = ref.for_litellm
    model_id = ref.model_id.removeprefix("responses/")
    for key in (f"{ref.provider}/{model_id}" if ref.provider else model_id, model_id):
        entry = table.get(key)
        if isinstance(entry, dict) and entry.get("mode") in (None, "chat", "responses"):
            return entry
    # ollama_chat/x and ollama/x share entries.
    if ref.provider == "ollama_chat":
        entry = table.get(f"ollama/{ref.model_id}")
        if isinstance(entry, dict):
            return entry
    if ref.provider == "openrouter":
        return underlying_entry(ref.model_id)
    return None


def in_litellm_table(ref: ModelRef) -> bool:
    """Whether litellm's own table knows this name (so litellm can price its replies)."""
    table = litellm_table()
    ref = ref.for_litellm
    model_id = ref.model_id.removeprefix("responses/")
    return any(
        isinstance(table.get(key), dict)
        for key in (f"{ref.provider}/{model_id}", model_id)
        if ref.provider != "openrouter"
    )


def underlying_entry(openrouter_id: str) -> dict[str, Any] | None:
    """The table entry of the model OpenRouter serves as ``openrouter_id`` (litellm's table
    has no ``openrouter/`` names): ``anthropic/claude-sonnet-4.5`` is Claude Sonnet 4.5's."""
    if "/" not in openrouter_id:
        return None
    vendor, name = openrouter_id.split("/", 1)
    name = name.split(":", 1)[0]  # ":free", ":thinking" variants
    provider = {"google": "gemini", "x-ai": "xai", "mistralai": "mistral"}.get(vendor, vendor)
    table = model_table()
    for candidate in dict.fromkeys((name, name.replace(".", "-"))):
        for key in (candidate, f"{provider}/{candidate}"):
            entry = table.get(key)
            if isinstance(entry, dict) and entry.get("mode") in (None, "chat", "responses"):
                return entry
    return None


#: Context windows reported by local servers (Ollama's ``/api/show``), by model name.
_reported_windows: dict[str, int] = {}


def remember_context_window(ref: ModelRef, tokens: int) -> None:
    """Record the window a local server reported for ``ref`` (used when nothing else says)."""
    if tokens > 0:
        _reported_windows[ref.for_litellm.litellm_name] = tokens


def forget_reported_windows() -> None:
    _reported_windows.clear()


def reported_context_window(ref: ModelRef) -> int | None:
    return _reported_windows.get(ref.for_litellm.litellm_name)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _levels(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(level for level in value if isinstance(level, str) and level)


def model_info(ref: ModelRef, overrides: dict[str, Any] | None = None) -> ModelInfo:
    """What we know about ``ref``; ``overrides`` is the settings ``models`` section."""
    entry = _entry_for(ref)
    info = ModelInfo(ref)
    if entry is not None:
        info = ModelInfo(
            ref,
            context_window=_int(entry.get("max_input_tokens")) or _int(entry.get("max_tokens")),
            max_output=_int(entry.get("max_output_tokens")),
            input_cost=_float(entry.get("input_cost_per_token")),
            output_cost=_float(entry.get("output_cost_per_token")),
            cache_read_cost=_float(entry.get("cache_read_input_token_cost")),
            cache_write_cost=_float(entry.get("cache_creation_input_token_cost")),
            supports_reasoning=bool(entry.get("supports_reasoning")),
            known=True,
            mode=entry.get("mode") if isinstance(entry.get("mode"), str) else None,
            thinking_levels=_levels(entry.get("thinking_levels")),
        )
    if info.context_window is None and reported_context_window(ref):
        info = replace(info, context_window=reported_context_window(ref))
    override = model_settings(ref, overrides)
    if override:
        fields: dict[str, Any] = {}
        for key, attr in (
            ("contextWindow", "context_window"),
            ("maxOutput", "max_output"),
            ("maxTokens", "max_output"),
        ):
            if _int(override.get(key)):
                fields[attr] = _int(override.get(key))
        for key, attr in (
            ("inputCost", "input_cost"),
            ("outputCost", "output_cost"),
            ("cacheReadCost", "cache_read_cost"),
            ("cacheWriteCost", "cache_write_cost"),
        ):
            if key in override:
                fields[attr] = _float(override.get(key)) / 1_000_000  # settings: $ per 1M
        if "reasoning" in override:
            fields["supports_reasoning"] = bool(override["reasoning"])
        info = replace(info, **fields)
    return info


def model_settings(ref: ModelRef, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The ``models[...]`` settings entry of ``ref`` under any of its spellings (or ``{}``)."""
    if not isinstance(overrides, dict):
        return {}
    for name in ref.names:
        entry = overrides.get(name)
        if isinstance(entry, dict):
            return entry
    return {}


def default_model_name(settings_value: Any) -> str | None:
    """``--model`` default: the setting, else ``PITUI_MODEL``."""
    if isinstance(settings_value, str) and settings_value.strip():
        return settings_value.strip()
    env = os.environ.get("PITUI_MODEL")
    return env.strip() if env and env.strip() else None
