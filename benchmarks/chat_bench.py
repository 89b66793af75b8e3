"""Chat pane, status line and main screen: streaming, per-event cost, first frame, scrolling back.

    python benchmarks/chat_bench.py [stream] [rate] [events] [first] [earlier] [--quick]

Measured inside the app, headless, with the frames the app sends to its terminal rendered to
text (what a real terminal would be sent; ``App._display`` is probed for it):

* ``stream``: a 5k/20k/40k-token Markdown reply fed as agent events (one token per event, as
  providers stream) as fast as the app takes them. Reports the feed time (the events alone:
  the "raw stream" of this in-process setup), first -> last token on screen, and the time
  from the stored message to its frame (the stored block replacing the preview).
* ``rate``: a 32 KB reply at 500 tokens/s: CPU of the process while streaming, key echo (a
  key posted to the editor -> the frame showing it), and end lag (last event -> on screen).
* ``events``: the UI's cost per store event (status line + chat) on the active path of
  generated sessions (2k .. 1M entries): one round = a user message, an assistant tool call,
  a tool result and the final answer appended to the store.
* ``first``: open + first frame of generated sessions, and what is deferred after it.
* ``earlier``: six clicks on "Show N earlier entries" at 200k: time per click and memory.

The provider layer is not in these figures (litellm's own per-chunk cost is measured by
``--litellm``, against a local OpenAI-compatible server). Sessions are generated when missing
(``generate.py --seed 1``) into ``benchmarks/.data/``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / ".data"
SIZE = (120, 40)
sys.path.insert(0, str(ROOT))

import tui_server  # noqa: E402
from textual import events  # noqa: E402
from textual.app import App  # noqa: E402
from tui_server import tokenize  # noqa: E402

from pitui.agent.events import MessageDelta, MessageStart, RunEnded  # noqa: E402
from pitui.config.settings import Settings  # noqa: E402
from pitui.session import SessionStore  # noqa: E402
from pitui.ui.app import PituiApp  # noqa: E402

# ---------------------------------------------------------------------------------- content


def markdown_reply(tokens: int, seed: int, end: str = "ZZEND") -> str:
    """The TUI benchmark's seeded Markdown reply (``tui_server.markdown_reply``) of ``tokens``
    o200k tokens, from ``ZZBEGIN`` to ``end`` (the markers the probes look for)."""
    return tui_server.markdown_reply(target_tokens=tokens, seed=seed, begin="ZZBEGIN", end=end)


# ---------------------------------------------------------------------------------- probes


class Frames:
    """Every frame the app sends to its terminal, rendered to text, with its time."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.frames: list[tuple[float, str]] = []
        self.waiters: list[tuple[Callable[[str], bool], asyncio.Future[float]]] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            text = renderable.render_segments(app.console)
            now = time.perf_counter()
            self.frames.append((now, text))
            if len(self.frames) > 64:
                del self.frames[:-64]
            for check, future in list(self.waiters):
                if not future.done() and check(text):
                    future.set_result(now)
                    self.waiters.remove((check, future))

        app._display = display  # type: ignore[method-assign]

    def wait_for(self, check: Callable[[str], bool]) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiters.append((check, future))
        return future


def new_app(store: SessionStore) -> PituiApp:
    return PituiApp(
        store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), clock=time.time
    )


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


# ---------------------------------------------------------------------------------- stream


async def feed(app: PituiApp, pieces: list[str], rate: float | None, batch: int = 8) -> float:
    """Publish the reply as agent events; returns the time the last one was published."""
    publish = app.bridge.on_agent_event
    publish(MessageStart("assistant"))
    start = time.perf_counter()
    for i, piece in enumerate(pieces):
        publish(MessageDelta("text", piece))
        if rate:
            wait = start + (i + 1) / rate - time.perf_counter()
            await asyncio.sleep(max(0.0, wait))
        elif i % batch == batch - 1:
            await asyncio.sleep(0)  # a fast provider: a few chunks per socket read
    return time.perf_counter()


def store_reply(app: PituiApp, text: str) -> None:
    app.store.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stopReason": "stop",
            "timestamp": 0,
        }
    )
    app.bridge.on_agent_event(RunEnded("done"))


async def stream_once(tokens: int, seed: int) -> dict[str, float]:
    text = markdown_reply(tokens, seed, end=f"ZZEND{seed}")
    pieces = tokenize(text)
    assert "".join(pieces) == text
    store = SessionStore.in_memory("/tmp")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "go"}]})
    app = new_app(store)
    result: dict[str, float] = {"tokens": float(len(pieces))}
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await pilot.pause(0.3)
        first = frames.wait_for(lambda s: "ZZBEGIN" in s)
        last = frames.wait_for(lambda s: f"ZZEND{seed}" in s)
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        fed = await feed(app, pieces, None)
        result["feed_s"] = fed - t0
        try:
            shown_last = await asyncio.wait_for(last, 600)
        except TimeoutError:
            shown_last = float("nan")
        result["first_s"] = await first - t0
        result["total_s"] = shown_last - t0
        result["cpu_s"] = time.process_time() - cpu0
        # The stored message replaces the preview: time to its frame and the longest stall.
        await pilot.pause(0.2)
        stored_frame = frames.wait_for(lambda s: True)
        t1 = time.perf_counter()
        store_reply(app, text)
        await pilot.pause(0.5)
        result["stored_s"] = (await stored_frame) - t1 if stored_frame.done() else float("nan")
    return result


async def rate_once(seed: int, keys: int = 40) -> dict[str, Any]:
    text = markdown_reply(8000, seed, end=f"ZZEND{seed}")  # ~32 KB
    pieces = tokenize(text)
    store = SessionStore.in_memory("/tmp")
    store.append_message({"role": "user", "content": [{"type": "text", "text": "go"}]})
    app = new_app(store)
    echoes: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await pilot.pause(0.3)
        last = frames.wait_for(lambda s: f"ZZEND{seed}" in s)
        feeder = asyncio.ensure_future(feed(app, pieces, 500.0))
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(1.0)
        for i in range(keys):
            if feeder.done():
                break
            char = "§¤"[i % 2]
            echoed = frames.wait_for(lambda s, c=char: c in s)
            sent = time.perf_counter()
            app.post_message(events.Key(char, char))
            try:
                echoes.append(await asyncio.wait_for(echoed, 10) - sent)
            except TimeoutError:
                echoes.append(10.0)
            await asyncio.sleep(0.15 + random.random() * 0.1)
            if i % 10 == 9:
                app.post_message(events.Key("ctrl+u", None))  # keep the editor short
        fed = await feeder
        shown = await asyncio.wait_for(last, 600)
        cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    return {
        "echo_median_ms": median_ms(echoes),
        "echo_p95_ms": pct(echoes, 95),
        "cpu_percent": cpu * 100,
        "end_lag_ms": (shown - fed) * 1000,
        "tokens": len(pieces),
        "stream_s": fed - wall0,
    }


# ---------------------------------------------------------------------------------- sessions

SESSION_SIZES = {"2k": 2_000, "20k": 20_000, "200k": 200_000, "1m": 1_000_000}


def session_file(size: str) -> Path:
    path = DATA / f"session-{size}-s1.jsonl"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        print(f"generating {path.name} ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                str(HERE / "generate.py"),
                "--entries",
                str(SESSION_SIZES[size]),
                "--seed",
                "1",
                str(path),
            ],
            check=True,
        )
    return path


FIRST_FRAME_CHILD = r"""
import sys, time, json, os
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[2])
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import ChatView
cpu0 = time.process_time()
store = SessionStore.open(sys.argv[1], read_only=True)
opened = time.perf_counter()
opened_cpu = time.process_time()
app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}))
frames = []
cpu_frames = []
original = app._display
def display(screen, renderable):
    original(screen, renderable)
    if renderable is not None and not app._batch_count:
        renderable.render_segments(app.console)
        frames.append(time.perf_counter())
        cpu_frames.append(time.process_time())
app._display = display
async def auto(pilot):
    while not frames:
        await pilot.pause(0.001)
    first = frames[0]
    await pilot.pause(1.0)
    import resource
    print("RESULT " + json.dumps({"open_s": opened - t0, "first_frame_s": first - t0,
        "ui_s": first - opened, "open_cpu_s": opened_cpu - cpu0,
        "ui_cpu_s": cpu_frames[0] - opened_cpu,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)
    app.exit()
app.run(headless=True, auto_pilot=auto, size=(120, 40))
"""


def first_frame(size: str, runs: int) -> dict[str, Any]:
    path = session_file(size)
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", FIRST_FRAME_CHILD, str(path), str(ROOT)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            raise RuntimeError(out.stderr[-3000:])
        samples.append(json.loads(line[7:]))
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


EVENTS_CHILD = r"""
import asyncio, sys, time, json, statistics
sys.path.insert(0, sys.argv[2])
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import ChatView
from pitui.ui.widgets.status import StatusLine
path = sys.argv[1]
store = SessionStore.open(path) if path != "-" else SessionStore.in_memory("/tmp")
app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}))
rounds = int(sys.argv[3])
async def auto(pilot):
    await asyncio.sleep(1.0)
    chat = app.query_one(ChatView)
    costs = []
    for i in range(rounds):
        cpu = time.process_time()
        t = time.perf_counter()
        store.append_message({"role": "user", "content": [{"type": "text", "text": f"round {i}"}]})
        store.append_message({"role": "assistant", "content": [{"type": "toolCall", "id": f"c{i}",
            "name": "read", "arguments": {"path": "a.txt"}}], "stopReason": "toolUse"})
        store.append_message({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "read",
            "content": [{"type": "text", "text": "hello"}], "isError": False})
        store.append_message({"role": "assistant", "content": [{"type": "text",
            "text": f"done {i}"}], "stopReason": "stop"})
        await chat.wait_idle()
        await asyncio.sleep(0.05)
        costs.append(time.process_time() - cpu)
    print("RESULT " + json.dumps({"round_ms": statistics.median(costs[2:]) * 1000}), flush=True)
    app.exit()
app.run(headless=True, auto_pilot=auto, size=(120, 40))
"""


def event_cost(size: str, rounds: int) -> dict[str, Any]:
    if size == "none":
        path = "-"
    else:
        source = session_file(size)
        path = str(DATA / f"events-{size}.jsonl")
        subprocess.run(["cp", str(source), path], check=True)
    out = subprocess.run(
        [sys.executable, "-c", EVENTS_CHILD, path, str(ROOT), str(rounds)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(line[7:])


EARLIER_CHILD = r"""
import asyncio, sys, time, json, resource, gc
sys.path.insert(0, sys.argv[2])
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.chat import ChatView
store = SessionStore.open(sys.argv[1], read_only=True)
app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}))
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
async def auto(pilot):
    await pilot.pause(1.5)
    chat = app.query_one(ChatView)
    out = []
    for i in range(int(sys.argv[3])):
        chat.scroll_home(animate=False)
        await pilot.pause(0.2)
        gc.collect()
        before = rss()
        t = time.perf_counter()
        if hasattr(chat, "load_earlier"):
            if not await chat.load_earlier():
                break
        else:  # before the windowed chat: the button's handler
            buttons = chat.query("#load-earlier")
            if not buttons:
                break
            count = len(chat.children)
            buttons.first().press()
            while len(chat.children) == count:
                await pilot.pause(0.001)
        await pilot.pause()
        took = time.perf_counter() - t
        await pilot.pause(0.3)
        gc.collect()
        out.append({"click_s": took, "rss_delta_mib": rss() - before, "rss_mib": rss(),
                    "mounted": len(chat.children)})
    print("RESULT " + json.dumps(out), flush=True)
    app.exit()
app.run(headless=True, auto_pilot=auto, size=(120, 40))
"""


def earlier(size: str, clicks: int) -> list[dict[str, float]]:
    path = session_file(size)
    out = subprocess.run(
        [sys.executable, "-c", EARLIER_CHILD, str(path), str(ROOT), str(clicks)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(line[7:])


# ---------------------------------------------------------------------------------- litellm


def litellm_cost(tokens: int) -> dict[str, float]:
    """litellm's own cost per streamed chunk (no UI): a local OpenAI-compatible server streams
    ``tokens`` chunks as fast as it can; raw = a plain socket reader, litellm = pitui's
    ``stream_reply`` through litellm's real openai provider."""
    import http.client
    from http.server import BaseHTTPRequestHandler

    from pitui.llm.lazy import litellm
    from pitui.llm.local_server import BackgroundHTTPServer
    from pitui.llm.models import ModelRef, model_info
    from pitui.llm.stream import CallOptions, ReplyBuilder, stream_reply

    pieces = tokenize(markdown_reply(tokens, 1))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def event(payload: Any) -> None:
                line = f"data: {payload if isinstance(payload, str) else json.dumps(payload)}\n\n"
                data = line.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

            def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                return {
                    "id": "x",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "gpt-4o-mini",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }

            event(chunk({"role": "assistant", "content": ""}))
            for piece in pieces:
                event(chunk({"content": piece}))
            event(chunk({}, "stop"))
            event("[DONE]")
            self.wfile.write(b"0\r\n\r\n")

    class Server(BackgroundHTTPServer):
        handler_class = Handler

    server = Server().start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        conn.request("POST", "/v1/chat/completions", "{}", {"Content-Type": "application/json"})
        t0 = time.perf_counter()
        first = None
        for line in conn.getresponse():
            if b'"content": "' in line and first is None:
                first = time.perf_counter()
        raw = time.perf_counter() - (first or t0)
        conn.close()
        litellm()
        info = model_info(ModelRef.parse("openai/gpt-4o-mini"))
        stamps: list[float] = []
        options = CallOptions(api_base=f"http://127.0.0.1:{server.port}/v1", api_key="x")

        async def run() -> None:
            await stream_reply(
                info,
                [{"role": "user", "content": "x"}],
                [],
                options,
                ReplyBuilder(info),
                lambda e: stamps.append(time.perf_counter()),
            )

        cpu = time.process_time()
        asyncio.run(run())
        cpu = time.process_time() - cpu
    finally:
        server.stop()
    return {
        "chunks": len(pieces),
        "raw_s": raw,
        "litellm_s": stamps[-1] - stamps[0],
        "litellm_cpu_ms_per_chunk": cpu / len(pieces) * 1000,
    }


# ---------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "groups", nargs="*", default=["stream", "rate", "events", "first", "earlier"]
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--sizes", default="")
    parser.add_argument("--litellm", action="store_true", help="also litellm's per-chunk cost")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    results: dict[str, Any] = {}
    if "stream" in args.groups:
        print("== stream: first -> last token on screen, replies fed as fast as taken")
        for tokens in (5_000, 20_000, 40_000):
            samples = [asyncio.run(stream_once(tokens, seed)) for seed in range(1, runs + 1)]
            row = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
            results[f"stream_{tokens // 1000}k"] = row
            print(
                f"  {tokens // 1000:>3}k tokens ({row['tokens']:.0f} events): feed "
                f"{row['feed_s'] * 1e3:8.1f} ms, first token {row['first_s'] * 1e3:7.1f} ms, "
                f"last token {row['total_s'] * 1e3:9.1f} ms "
                f"({row['total_s'] / row['feed_s']:.2f}x feed), CPU {row['cpu_s']:.2f} s; "
                f"stored block -> frame {row['stored_s'] * 1e3:.1f} ms",
                flush=True,
            )
    if "rate" in args.groups:
        print("== rate: 32 KB reply at 500 tokens/s")
        samples = [asyncio.run(rate_once(seed)) for seed in range(1, runs + 1)]
        row = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        results["rate"] = row
        print(
            f"  key echo median {row['echo_median_ms']:.1f} ms, p95 {row['echo_p95_ms']:.1f} ms;"
            f" CPU {row['cpu_percent']:.0f}% of a core; end lag {row['end_lag_ms']:.0f} ms "
            f"({row['tokens']:.0f} tokens in {row['stream_s']:.1f} s)",
            flush=True,
        )
    sizes = [s for s in (args.sizes.split(",") if args.sizes else ["2k", "20k", "200k", "1m"])]
    if args.quick and not args.sizes:
        sizes = ["2k", "200k"]
    if "events" in args.groups:
        print("== events: UI CPU per tool round (4 store appends) by session size")
        for size in ["none", *sizes]:
            row = event_cost(size, 12)
            results[f"events_{size}"] = row
            print(f"  {size:>5}: {row['round_ms']:.1f} ms per round", flush=True)
    if "first" in args.groups:
        print("== first: open + first frame (child process, median)")
        for size in sizes:
            row = first_frame(size, 1 if args.quick else 3)
            results[f"first_{size}"] = row
            print(
                f"  {size:>5}: first frame {row['first_frame_s'] * 1e3:7.0f} ms wall (open "
                f"{row['open_s'] * 1e3:.0f} ms, UI {row['ui_s'] * 1e3:.0f} ms); CPU: open "
                f"{row['open_cpu_s'] * 1e3:.0f} ms, UI to first frame "
                f"{row['ui_cpu_s'] * 1e3:.0f} ms; peak RSS {row['rss_mib']:.0f} MiB",
                flush=True,
            )
    if "earlier" in args.groups:
        print("== earlier: six clicks on 'Show N earlier entries' at 200k")
        rows = earlier("200k", 6)
        results["earlier_200k"] = rows
        for i, row in enumerate(rows, 1):
            print(
                f"  click {i}: {row['click_s'] * 1e3:6.0f} ms, RSS {row['rss_delta_mib']:+6.1f} "
                f"MiB (now {row['rss_mib']:.0f} MiB), {row['mounted']} widgets mounted",
                flush=True,
            )
    if args.litellm:
        print("== litellm: per-chunk cost of the provider layer (no UI)")
        for tokens in (5_000, 20_000):
            row = litellm_cost(tokens)
            results[f"litellm_{tokens // 1000}k"] = row
            print(
                f"  {tokens // 1000}k ({row['chunks']} chunks): raw {row['raw_s'] * 1e3:.0f} ms,"
                f" through litellm {row['litellm_s'] * 1e3:.0f} ms, "
                f"{row['litellm_cpu_ms_per_chunk']:.2f} ms CPU per chunk",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
