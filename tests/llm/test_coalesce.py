"""Adjacent text deltas merged before litellm parses them: the same reply, fewer events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from pitui.llm.coalesce import CoalescingTransport, Event, coalesce, merge, split_events


def openai(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **extra,
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def anthropic(index: int, kind: str, field: str, text: str) -> bytes:
    body = {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: text}}
    return b"event: content_block_delta\ndata: " + json.dumps(body).encode() + b"\n\n"


def datas(stream: bytes) -> list[Any]:
    events, rest = split_events(stream)
    assert rest == b""
    out: list[Any] = []
    for raw in events:
        line = next(x for x in raw.splitlines() if x.startswith(b"data:"))[5:].strip()
        out.append(line.decode() if line == b"[DONE]" else json.loads(line))
    return out


def test_openai_text_deltas_become_one_event_and_the_rest_stays_as_it_came() -> None:
    usage = (
        b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\n'
    )
    raw = [
        openai({"role": "assistant", "content": ""}),
        openai({"content": "Hel"}),
        openai({"content": "lo "}),
        openai({"content": "world"}),
        openai({}, "stop"),
        usage,
        b"data: [DONE]\n\n",
    ]
    out = datas(coalesce(raw))
    assert len(out) == 4
    assert out[0]["choices"][0]["delta"] == {"role": "assistant", "content": "Hello world"}
    assert out[1]["choices"][0]["finish_reason"] == "stop"  # never merged
    assert out[2]["usage"] == {"prompt_tokens": 3, "completion_tokens": 4}
    assert out[3] == "[DONE]"
    # untouched events keep their bytes
    assert coalesce(raw).endswith(raw[4] + usage + b"data: [DONE]\n\n")


@pytest.mark.parametrize(
    "second",
    [
        openai({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        openai({"reasoning_content": "think"}),  # another kind of text: kept apart
        openai({"content": "x"}, logprobs=None, usage={"total_tokens": 1}),
        openai({"content": "x", "role": "tool"}),
        b'data: {"id":"other","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n',
        b'data: {"id":"chatcmpl-1","choices":[{"index":1,"delta":{"content":"x"}}]}\n\n',
        b'data: {"id":"chatcmpl-1","unknown":1,'
        b'"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n',
        b"data: not json\n\n",
        b": a comment\n\n",
    ],
)
def test_events_that_differ_in_anything_but_the_text_are_not_merged(second: bytes) -> None:
    first = openai({"content": "a"})
    assert coalesce([first, second]) == first + second


def test_anthropic_deltas_of_one_block_are_merged_and_blocks_stay_apart() -> None:
    raw = [
        anthropic(0, "thinking_delta", "thinking", "Let "),
        anthropic(0, "thinking_delta", "thinking", "me think."),
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"signature_delta","signature":"sig"}}\n\n',
        anthropic(1, "text_delta", "text", "An"),
        anthropic(1, "text_delta", "text", "swer"),
        anthropic(2, "input_json_delta", "partial_json", '{"pa'),
        anthropic(2, "input_json_delta", "partial_json", 'th": "x"}'),
        b"event: message_delta\n"
        b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n',
    ]
    out = datas(coalesce(raw))
    assert [o["delta"] for o in out[:-1]] == [
        {"type": "thinking_delta", "thinking": "Let me think."},
        {"type": "signature_delta", "signature": "sig"},
        {"type": "text_delta", "text": "Answer"},
        {"type": "input_json_delta", "partial_json": '{"path": "x"}'},
    ]
    assert b"event: content_block_delta\n" in coalesce(raw)
    assert out[-1]["type"] == "message_delta"


def test_split_events_keeps_an_incomplete_event_for_later() -> None:
    events, rest = split_events(b"data: 1\n\ndata: 2\r\n\r\ndata: 3")
    assert events == [b"data: 1\n\n", b"data: 2\r\n\r\n"]
    assert rest == b"data: 3"
    assert Event.parse(b"id: 7\ndata: {}\n\n").data is None  # unknown field: kept as it is
    assert merge(Event.parse(openai({"content": "a"})), Event.parse(b"data: [DONE]\n\n")) is None


def test_a_long_burst_is_one_event_with_every_piece_in_order() -> None:
    """Thousands of deltas (a reply read at once) join into one event, text intact, with
    escapes and multi-byte characters; the events before and after stay apart."""
    pieces = [f'tok{i} "q" \\ é\n' for i in range(5000)]
    raw = [openai({"role": "assistant", "content": ""})]
    raw += [openai({"content": piece}) for piece in pieces]
    raw += [openai({}, "stop"), b"data: [DONE]\n\n"]
    stream = b"".join(raw)
    assert b"\r" not in stream
    events, rest = split_events(stream)
    assert events == raw and rest == b""
    out = datas(coalesce(events))
    assert len(out) == 3
    assert out[0]["choices"][0]["delta"] == {"role": "assistant", "content": "".join(pieces)}


def test_what_only_the_lenient_json_reader_accepts_is_read_too() -> None:
    """msgspec refuses NaN, which Python's json (and so litellm) accepts: such an event is
    still read and merged like any other (fields other than the text are the first's)."""
    odd = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":NaN,' + (
        b'"model":"m","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}\n\n'
    )
    assert Event.parse(odd).data["choices"][0]["delta"] == {"content": "b"}
    raw = [openai({"content": "a"}), odd, openai({"content": "c"})]
    out = datas(coalesce(raw))
    assert len(out) == 1 and out[0]["choices"][0]["delta"] == {"content": "abc"}
    assert datas(coalesce([odd, openai({"content": "c"})]))[0]["created"] != 1  # NaN kept
    assert Event.parse(b"data: {not json}\n\n").data is None


def _client(
    body: AsyncIterator[bytes], content_type: str = "text/event-stream"
) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=body)

    return httpx.AsyncClient(transport=CoalescingTransport(httpx.MockTransport(handler)))


async def _read(client: httpx.AsyncClient) -> list[bytes]:
    async with client.stream("POST", "http://llm.test/v1/chat/completions") as response:
        return [chunk async for chunk in response.aiter_raw()]


def test_a_burst_reaches_the_reader_as_one_event_and_a_trickle_in_order() -> None:
    deltas = [f"w{i} " for i in range(200)]

    async def burst() -> AsyncIterator[bytes]:
        for text in deltas:
            yield openai({"content": text})
        yield b"data: [DONE]\n\n"

    async def trickle() -> AsyncIterator[bytes]:
        for text in deltas[:5]:
            await asyncio.sleep(0.03)  # longer than the window: each on its own
            yield openai({"content": text})

    async def main() -> tuple[list[bytes], list[bytes]]:
        return await _read(_client(burst())), await _read(_client(trickle()))

    fast, slow = asyncio.run(main())
    merged = datas(b"".join(fast))
    assert merged[-1] == "[DONE]"
    assert "".join(m["choices"][0]["delta"]["content"] for m in merged[:-1]) == "".join(deltas)
    assert len(merged) < 20  # 200 events in a burst: a few reads
    assert [d["choices"][0]["delta"]["content"] for d in datas(b"".join(slow))] == deltas[:5]


def test_an_error_mid_stream_reaches_the_reader_after_what_came_before() -> None:
    async def broken() -> AsyncIterator[bytes]:
        yield openai({"content": "partial"})
        raise httpx.ReadError("connection reset")

    got: list[bytes] = []

    async def main() -> None:
        async with _client(broken()).stream("POST", "http://llm.test/x") as response:
            async for chunk in response.aiter_raw():
                got.append(chunk)

    with pytest.raises(httpx.ReadError, match="connection reset"):
        asyncio.run(main())
    assert datas(b"".join(got))[0]["choices"][0]["delta"]["content"] == "partial"


def test_other_responses_pass_untouched() -> None:
    body = openai({"content": "a"}) + openai({"content": "b"})

    async def once() -> AsyncIterator[bytes]:
        yield body

    async def main() -> list[bytes]:
        return await _read(_client(once(), content_type="application/json"))

    assert b"".join(asyncio.run(main())) == body


def test_reading_the_body_again_goes_on_where_the_last_reader_stopped() -> None:
    """The OpenAI SDK stops at ``[DONE]`` and then drains the body: that must end, at once."""

    async def body() -> AsyncIterator[bytes]:
        yield openai({"content": "a"})
        await asyncio.sleep(0.05)
        yield b"data: [DONE]\n\n"
        await asyncio.sleep(0.05)
        yield b": trailing comment\n\n"

    async def main() -> tuple[list[bytes], list[bytes]]:
        client = _client(body())
        async with client.stream("POST", "http://llm.test/x") as response:
            first: list[bytes] = []
            async for chunk in response.stream:
                first.append(chunk)
                if b"[DONE]" in chunk:
                    break
            rest = [chunk async for chunk in response.stream]
            again = [chunk async for chunk in response.stream]
            assert again == []
            return first, rest

    first, rest = asyncio.run(asyncio.wait_for(main(), 10))
    assert b"".join(first).endswith(b"data: [DONE]\n\n")
    assert rest == [b": trailing comment\n\n"]


def test_the_provider_client_reads_over_litellms_own_transport_and_coalesces() -> None:
    """``litellm.aclient_session`` (what every OpenAI-compatible call streams through) uses the
    transport litellm itself would (aiohttp, HTTP parsed in C: about five times faster than
    httpx's h11 on a fast stream), and a burst read over a real socket still arrives merged."""
    from litellm.llms.custom_httpx.aiohttp_transport import LiteLLMAiohttpTransport

    from pitui.llm.coalesce import coalescing_client

    events = [openai({"content": f"w{i} "}) for i in range(200)] + [b"data: [DONE]\n\n"]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        writer.write(head + b"transfer-encoding: chunked\r\n\r\n")
        for event in events:  # one chunk per event, all at once
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def main() -> list[bytes]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = coalescing_client()
        inner = client._transport._inner  # type: ignore[attr-defined]
        assert isinstance(inner, LiteLLMAiohttpTransport)
        try:
            async with client.stream("POST", f"http://127.0.0.1:{port}/v1/x", json={}) as r:
                return [chunk async for chunk in r.aiter_raw()]
        finally:
            await client.aclose()
            server.close()

    chunks = asyncio.run(asyncio.wait_for(main(), 20))
    got = datas(b"".join(chunks))
    assert got[-1] == "[DONE]"
    assert "".join(d["choices"][0]["delta"]["content"] for d in got[:-1]) == "".join(
        f"w{i} " for i in range(200)
    )
    assert len(got) < 20  # merged, not 201 events


def test_events_read_without_parsing_are_exactly_those_that_differ_only_in_their_text() -> None:
    """After the first events of a run, an event with the same bytes around its text is
    taken without parsing it; one that only looks alike (another field after the text, a
    finish reason, another index) is parsed and kept apart as before."""
    texts = ["plain", 'a "quote"', "back\\slash", "tab\tnew\nline", "é ü 漢字", "\u2028", ""]
    raw = [openai({"role": "assistant", "content": ""})]
    raw += [openai({"content": text}) for text in texts]
    raw += [
        openai({"content": "x", "refusal": "no"}),  # a second field after the text
        openai({"content": "y"}),
        openai({"content": "z"}, "stop"),  # the same text field, then a finish reason
        openai({"content": "w"}),
    ]
    out = datas(coalesce(raw))
    deltas = [event["choices"][0]["delta"] for event in out]
    assert deltas == [
        {"role": "assistant", "content": "".join(texts)},
        {"content": "x", "refusal": "no"},
        {"content": "y"},
        {"content": "z"},
        {"content": "w"},
    ]
    assert out[3]["choices"][0]["finish_reason"] == "stop"
    # Another choice index with the same length: parsed, not merged.
    other = openai({"content": "b"}).replace(b'"index": 0', b'"index": 1')
    merged = datas(coalesce([openai({"content": "a"}), openai({"content": "q"}), other]))
    assert [event["choices"][0]["index"] for event in merged] == [0, 1]
    # Anthropic text deltas of one block too, kept apart from the next block's.
    events = [anthropic(0, "text_delta", "text", t) for t in ("a", 'b"', "c")]
    events += [anthropic(1, "text_delta", "text", "d")]
    blocks = datas(coalesce(events))
    assert [(b["index"], b["delta"]["text"]) for b in blocks] == [(0, 'ab"c'), (1, "d")]


def test_a_surrogate_pair_split_across_events_is_joined_whole() -> None:
    """A character outside the BMP escaped as a surrogate pair whose halves come in two
    events (each half alone is not text): the merged event holds the character."""
    first = openai({"content": "x"})
    halves = [first.replace(b'"x"', b'"a\\ud83d"'), first.replace(b'"x"', b'"\\ude00b"')]
    for raw in (halves, [first, *halves]):
        out = datas(coalesce(raw))
        assert len(out) == 1
        text = out[0]["choices"][0]["delta"]["content"]
        assert text.endswith("a\U0001f600b")
        assert text.encode()  # valid UTF-8 for whoever reads it
