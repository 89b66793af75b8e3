"""The wire APIs pitui speaks itself, one module each: request building (history conversion
included), stream parsing, usage and the provider's stop and error shapes.

Each module has ``request(call) -> HttpRequest`` and ``async read(lines, reply, url)``, and
may have ``rename_call(id) -> id`` when its API restricts tool call ids. They import httpx,
so they are loaded on first use, in a thread (:func:`load`), never on an event loop.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Protocol, cast

from pitui.llm.routes import (
    ANTHROPIC_MESSAGES,
    GOOGLE_GENERATIVE_AI,
    OPENAI_COMPLETIONS,
    OPENAI_RESPONSES,
)

if TYPE_CHECKING:
    from pitui.llm.call import Call
    from pitui.llm.reply import ReplyBuilder
    from pitui.llm.transport import HttpRequest

MODULES = {
    ANTHROPIC_MESSAGES: "pitui.llm.apis.anthropic_messages",
    OPENAI_COMPLETIONS: "pitui.llm.apis.openai_completions",
    OPENAI_RESPONSES: "pitui.llm.apis.openai_responses",
    GOOGLE_GENERATIVE_AI: "pitui.llm.apis.google_generative_ai",
}


class WireApi(Protocol):
    def request(self, call: Call) -> HttpRequest: ...

    async def read(self, lines: AsyncIterator[bytes], reply: ReplyBuilder, url: str) -> None: ...


def api_module(api: str) -> WireApi:
    """The module speaking ``api`` (one of :data:`pitui.llm.routes.NATIVE_APIS`)."""
    name = MODULES[api]
    __import__(name)  # the interpreter's import statement: ``-X importtime`` logs it
    return cast(WireApi, sys.modules[name])


async def load(api: str) -> WireApi:
    """:func:`api_module`, imported in a thread the first time (httpx takes ~0.2 s)."""
    if MODULES[api] not in sys.modules:
        await asyncio.to_thread(api_module, api)
    return api_module(api)


def preload(api: str) -> None:
    """Import ``api``'s module (and httpx) and make the HTTP client ahead of the first request
    (call in a thread)."""
    if api in MODULES:
        api_module(api)
        from pitui.llm.provider_loop import provider_loop
        from pitui.llm.transport import prepare

        prepare()
        provider_loop()


def call_renamer(module: WireApi) -> Callable[[str], str] | None:
    rename: Callable[[str], str] | None = getattr(module, "rename_call", None)
    return rename
