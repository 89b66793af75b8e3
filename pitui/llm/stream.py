"""One streamed model call: the request's content built from the projected context, spoken in
the route's wire API (pitui's own module for the four native APIs, litellm for the rest), and
the reply fed into the caller's :class:`~pitui.llm.reply.ReplyBuilder`.

The stream is read on the provider loop (:mod:`pitui.llm.provider_loop`), so parsing never
holds up the caller's loop; ``emit`` receives the deltas on the caller's loop, merged per
hand-over (adjacent text or thinking joined, a tool call's latest arguments). The builder is
fed on the provider loop and read by the caller only after this returns or raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pitui.llm import apis
from pitui.llm.call import REASONING_EFFORT, Call, CallOptions
from pitui.llm.context import Context, build_context
from pitui.llm.models import ModelInfo
from pitui.llm.provider_loop import Batcher, run_on_provider_loop
from pitui.llm.reply import (
    ReplyBuilder,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    merge_events,
)

__all__ = [
    "REASONING_EFFORT",
    "CallOptions",
    "ReplyBuilder",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "build_call",
    "stream_reply",
]


def build_call(
    info: ModelInfo,
    messages: list[dict[str, Any]],
    tools: list[Any],
    options: CallOptions,
    builder: ReplyBuilder,
    api: apis.WireApi | None = None,
) -> Call:
    """The request for ``messages`` (a projected context, pi's shapes) and ``tools`` (tool
    declarations) to ``builder``'s route (``api``: the module speaking it, for its rules on
    tool call ids)."""
    rename = apis.call_renamer(api) if api is not None else None
    context: Context = build_context(messages, tools, builder.route, rename)
    return Call(info, builder.route, context, options)


async def _native(api: apis.WireApi, call: Call, builder: ReplyBuilder) -> None:
    from pitui.llm.transport import open_stream  # loaded with the API's module

    request = api.request(call)
    options = call.options
    async with open_stream(
        request, idle_timeout=options.idle_timeout, connect_timeout=options.connect_timeout
    ) as lines:
        await api.read(lines, builder, request.url)


async def stream_reply(
    info: ModelInfo,
    messages: list[dict[str, Any]],
    tools: list[Any],
    options: CallOptions,
    builder: ReplyBuilder,
    emit: Callable[[StreamEvent], None],
) -> None:
    """Run one streamed call, feeding ``builder``. Provider errors propagate to the caller
    (:class:`~pitui.llm.transport.ProviderError` for the native APIs, litellm's exceptions
    on its routes)."""
    target = builder.route
    api = await apis.load(target.api) if target.native else None
    call = build_call(info, messages, tools, options, builder, api)
    batch: Batcher[StreamEvent] = Batcher(asyncio.get_running_loop(), emit, merge_events)
    builder.emit = batch.add
    if api is not None:
        work = _native(api, call, builder)
    else:
        from pitui.llm.fallback.stream import stream_litellm

        work = stream_litellm(call, builder)
    try:
        await run_on_provider_loop(work)
    finally:
        batch.drain()
