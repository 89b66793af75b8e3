"""What a local Ollama server says about a model: its context window (``POST /api/show``).

Ollama allocates a small context unless a request says otherwise (``options.num_ctx``) and then
drops the start of a longer prompt without an error. pitui sends ``num_ctx``: the
``models[...].contextWindow`` setting, else the window the server reports for the model, asked
once per model, off the event loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pitui.llm.models import (
    ModelRef,
    forget_reported_windows,
    remember_context_window,
    reported_context_window,
)

DEFAULT_OLLAMA_BASE = "http://localhost:11434"
TIMEOUT = 5.0
_asked: set[str] = set()


def forget_served_windows() -> None:
    """Ask the servers again (tests; a server restarted with other models)."""
    _asked.clear()
    forget_reported_windows()


def context_length(show: dict[str, Any]) -> int | None:
    """``<architecture>.context_length`` from an ``/api/show`` answer."""
    info = show.get("model_info")
    if not isinstance(info, dict):
        return None
    for key, value in info.items():
        if key.endswith(".context_length") and isinstance(value, int) and value > 0:
            return value
    return None


def _show(base: str, model: str) -> int | None:
    import urllib.error  # here: urllib.request costs tens of ms on the path to the first frame
    import urllib.request

    url = base.rstrip("/").removesuffix("/v1") + "/api/show"
    request = urllib.request.Request(
        url,
        data=json.dumps({"model": model}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            answer = json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return context_length(answer) if isinstance(answer, dict) else None


async def served_context_window(ref: ModelRef, api_base: str | None) -> int | None:
    """The window the Ollama server reports for ``ref`` (remembered; asked once)."""
    known = reported_context_window(ref)
    if known:
        return known
    base = api_base or DEFAULT_OLLAMA_BASE
    key = f"{base} {ref.model_id}"
    if key in _asked:
        return None
    _asked.add(key)
    tokens = await asyncio.to_thread(_show, base, ref.model_id)
    if tokens:
        remember_context_window(ref, tokens)
    return tokens
