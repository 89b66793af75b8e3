"""TUI benchmarks in a real terminal (tmux), pitui beside pi 1.6 on the same scripted model.

    python benchmarks/run.py --tui [--quick] [--groups G,...] [--sizes S,...] [--runs N]
    python benchmarks/tui_bench.py ...          (the same)

Groups (default: all): ``calibrate`` (the poller's own resolution), ``first`` (Enter ->
message + spinner on the first request of a run; quit after a request), ``stream`` (a 32 KB
Markdown reply at 500 tokens/s: key echo, CPU, end lag), ``throughput`` (5k/20k/40k-token
replies as fast as possible vs the raw stream), ``session`` (per session size: first frame,
per tool-round cost, tree open/key/close and RSS, tree search, "Show N earlier entries").
Sizes: 2k, 20k, 200k, 1m and ``real`` (a ~2.5 MB session written by pi itself).

Runs alternate between the agents (ABBA order). Every figure is a median over runs (key echo:
over all keystrokes of all runs, with p95). Results: ``benchmarks/results/tui-latest.json``
and SVG charts (``tui_charts.py``). See benchmarks/README.md for what each measure means.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import random
import re
import signal
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tui_agents import AGENTS, Agent, Scratch, ensure_pi, pi_version  # noqa: E402
from tui_data import (  # noqa: E402
    PI_REAL_MARKER,
    SIZES,
    bench_file,
    copy_for_run,
    ensure_bench,
    latest_marker,
    make_pi_session,
)
from tui_server import (  # noqa: E402
    ScriptedModelServer,
    client_stream_seconds,
    fixed,
    markdown_reply,
    raw_stream_seconds,
    tool_loop,
)
from tui_terminal import (  # noqa: E402
    EXIT_MARK,
    Terminal,
    TerminalError,
    cpu_seconds,
    hwm_mib,
    rss_mib,
)

RESULTS_DIR = HERE / "results"
BARE_MARK = "ZZBARE" + "TEXTUAL"
BARE_TEXTUAL = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("ZZBARE" + "TEXTUAL")
Bare().run()
"""
"""The floor of a first frame: a Textual app with one line (its text is not in the script, so
the command line the terminal echoes cannot match it)."""
GROUPS = ("calibrate", "first", "early", "stream", "throughput", "session")
ALL_SIZES = ("2k", "20k", "200k", "1m", "real")
QUICK_SIZES = ("2k", "20k", "200k", "real")
STREAM_RATE = 500.0  # tokens/s, "a realistic rate" (issue 16)
STREAM_BYTES = 32 * 1024  # the 32 KB Markdown reply (issue 11)
THROUGHPUT_TOKENS = tuple(
    int(t) for t in os.environ.get("PITUI_BENCH_TOKENS", "5000,20000,40000").split(",")
)
TOOL_ROUNDS = 20
BIG = ("1m",)  # sizes where an agent's slow paths take minutes: fewer rounds, keys, cycles
TREE_CYCLES = 3
TREE_KEYS = 10
SEARCH_SIZES = ("20k", "200k")
EARLIER_SIZES = ("200k",)
EARLIER_CLICKS = 6
SLOW_RUN = 60.0  # a throughput run slower than this is not repeated
FIRST_PROMPT_AFTER = 0.5  # s after the first frame the first prompt is typed (issue 28)
EARLY_SIZE = "20k"  # the session the first tree opens on, at once after the first frame
SETTLE = 5.0  # s after the first frame when nothing loads in the background any more


# ---------------------------------------------------------------------------------- results


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}
    return {
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        "min": ordered[0],
        "max": ordered[-1],
        "n": len(ordered),
    }


@dataclass
class Results:
    samples: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, measure: str, key: str, agent: str, value: float | list[float]) -> None:
        bucket = self.samples.setdefault(measure, {}).setdefault(key, {}).setdefault(agent, [])
        if isinstance(value, list):
            bucket.extend(value)
        else:
            bucket.append(value)

    def get(self, measure: str, key: str, agent: str) -> list[float]:
        return self.samples.get(measure, {}).get(key, {}).get(agent, [])

    def error(self, where: str, agent: str, exc: BaseException) -> None:
        text = f"{type(exc).__name__}: {exc}"
        print(f"    ! {where} [{agent}]: {text.splitlines()[0][:200]}", flush=True)
        self.errors.append(
            {
                "where": where,
                "agent": agent,
                "error": text[:4000],
                "trace": traceback.format_exc()[-4000:],
            }
        )


# ------------------------------------------------------------------------------ the harness


def load_average() -> float:
    """The machine's 1-minute load average (this machine is shared: 2 cores)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0


class CpuSampler:
    """Samples utime+stime and RSS of a pid every ``interval`` s in a thread."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, float, float]] = []  # (t, cpu s, rss MiB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic(), cpu_seconds(self.pid), rss_mib(self.pid)))
            except (OSError, IndexError, ValueError):
                return
            self._stop.wait(self.interval)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(2)

    def percent(self, start: float, end: float) -> float | None:
        """CPU use in % of one core between two times (nearest samples inside)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2 or inside[-1][0] - inside[0][0] < 0.2:
            return None
        (t0, c0, _), (t1, c1, _) = inside[0], inside[-1]
        return 100.0 * (c1 - c0) / (t1 - t0)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.results = Results()
        self.server = ScriptedModelServer().start()
        width, height = (int(x) for x in args.term.split("x"))
        self.term = Terminal(width, height).start()
        self.agents: dict[str, Agent] = {name: AGENTS[name]() for name in args.agents}
        self.rng = random.Random(5)
        self.peak: dict[int, float] = {}  # pid -> VmHWM seen (MiB)
        self.last_ui_gone = 0.0  # the last quit: quit key -> the UI off the screen

    def close(self) -> None:
        self.term.close()
        self.server.stop()

    # ------------------------------------------------------------------------- primitives

    def order(self, run: int) -> list[Agent]:
        """ABBA: pitui first on even runs, pi first on odd ones."""
        agents = list(self.agents.values())
        return agents if run % 2 == 0 else agents[::-1]

    def rounds(self, runs: int) -> Iterator[tuple[int, Agent]]:
        """``runs`` runs of every agent, alternating (``order``): (run, agent) pairs."""
        for run in range(runs):
            for agent in self.order(run):
                yield run, agent

    def timed(
        self, send: Callable[[], float], shown: Callable[[str], bool], timeout: float, what: str
    ) -> float:
        """Seconds from ``send()`` (it returns when it sent) until the screen is ``shown``."""
        at = send()
        return self.term.wait_for(shown, timeout=timeout, what=what).at - at

    def launch(self, agent: Agent, scratch: Scratch, session: Path | None = None) -> float:
        agent.setup(scratch, self.server.api_base)
        self.term.unwatch_all()
        at = time.monotonic()
        self.term.run(
            agent.argv(self.server.api_base, scratch, session),
            agent.env(scratch),
            cwd=str(scratch.project),
        )
        return at

    def pid(self, agent: Agent) -> int:
        pid = self.term.program_pid(agent.process_hint)
        if pid is None:
            raise TerminalError(f"{agent.name}: process not found")
        return pid

    def ready(self, agent: Agent, timeout: float = 120.0) -> None:
        self.term.wait_for(
            lambda s: agent.ready.search(s) is not None, timeout, what=f"{agent.name} ready"
        )
        self.term.wait_quiet(0.3, timeout=10)

    def type_prompt(self, text: str) -> None:
        self.term.send(text, literal=True)
        self.term.wait_text(text, timeout=30)
        self.term.wait_quiet(0.15, timeout=10)

    def idle(self, agent: Agent, timeout: float = 120.0) -> None:
        self.term.wait_for(
            lambda s: agent.busy.search(s) is None, timeout, what=f"{agent.name} idle"
        )
        self.term.wait_quiet(0.3, timeout=10)

    def quit(self, agent: Agent, timeout: float = 60.0) -> float:
        """Quit keys -> the process has exited and the terminal shows the shell's marker."""
        at = 0.0
        self.term.watch("ui_gone", agent.ui_gone)
        for key in agent.quit_keys:
            at = self.term.send(key)
        seen = self.term.wait_text(EXIT_MARK, timeout=timeout)
        gone = self.term.seen.get("ui_gone", seen.at)
        self.last_ui_gone = gone - at
        return seen.at - at

    @contextmanager
    def run_scope(self, where: str, agent: Agent) -> Iterator[Scratch]:
        """One run: whatever fails in it is recorded (with where and which agent) and the
        next run goes on; a terminal whose control client died is reconnected first."""
        if not self.term.alive:
            try:
                self.term.reconnect()
            except (TerminalError, OSError) as exc:
                self.results.error(f"{where} (terminal)", agent.name, exc)
        scratch = Scratch.make()
        self.results.add("loadavg", where.split(" ")[0], "machine", load_average())
        try:
            yield scratch
        except Exception as exc:  # one failed run never ends its group
            self.results.error(where, agent.name, exc)
        finally:
            try:
                self.term.stop_program()
            except Exception as exc:  # BrokenPipeError under load, and the like
                self.results.error(f"{where} (cleanup)", agent.name, exc)
            scratch.cleanup()
            self.server.reset(None)

    # --------------------------------------------------------------------------- calibrate

    def group_calibrate(self) -> None:
        print("\n== calibrate: the poller's resolution", flush=True)
        out: dict[str, Any] = {}
        for size in ("120x40", "80x24"):
            w, h = (int(x) for x in size.split("x"))
            try:
                with Terminal(w, h) as term:
                    cal = term.calibrate(samples=40 if self.args.quick else 80)
            except (TerminalError, OSError) as exc:  # the other size is still calibrated
                self.results.error(f"calibrate {size}", "-", exc)
                out[size] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                continue
            out[size] = cal
            print(f"  {size}: {calibration_text(cal)}", flush=True)
        self.results.extra["calibration"] = out

    # ------------------------------------------------------------------------------- first

    def group_first(self) -> None:
        runs = self.args.runs or (2 if self.args.quick else 4)
        print(
            f"\n== first: Enter -> message + spinner on the first request; quit ({runs} runs)",
            flush=True,
        )
        for run, agent in self.rounds(runs):
            self.first_run(agent, run)

    def first_run(self, agent: Agent, run: int) -> None:
        with self.run_scope("first", agent) as scratch:
            reply = "zqreply done. " + markdown_reply(target_bytes=600, seed=run)
            self.server.reset(fixed(reply, first_delay=1.5))
            spawned = self.launch(agent, scratch)
            frame = self.term.wait_for(
                lambda s: agent.ready.search(s) is not None, 120, what=f"{agent.name} ready"
            )
            self.results.add("startup_ready", "-", agent.name, frame.at - spawned)
            # A user types the first prompt half a second after the screen shows up (issue
            # 28): whatever the agent still loads then is what the request waits for.
            time.sleep(max(0.0, frame.at + FIRST_PROMPT_AFTER - time.monotonic()))
            prompt = f"zqfirst hello {run}"
            self.type_prompt(prompt)
            at = self.term.send("Enter")
            seen = self.term.wait_for(
                lambda s: (
                    agent.editor_empty(s) and prompt in s and agent.busy.search(s) is not None
                ),
                timeout=60,
                what="the message and the spinner",
            )
            spinner = seen.at - at
            self.results.add("enter_to_spinner", "-", agent.name, spinner)
            if not self.server.wait_requests(1, 60):
                raise TerminalError("no request reached the model")
            request = self.server.requests[0].arrived - at
            self.results.add("enter_to_request", "-", agent.name, request)
            self.term.wait_text("zqreply done", timeout=60)
            self.idle(agent)
            rss = rss_mib(self.pid(agent))
            self.results.add("rss_after_request", "-", agent.name, rss)
            took = self.quit(agent)
            self.results.add("quit_after_request", "-", agent.name, took)
            self.results.add("quit_ui_gone", "-", agent.name, self.last_ui_gone)
            print(
                f"  {agent.name:5} run {run}: Enter -> spinner {spinner * 1e3:7.1f} ms, "
                f"-> request {request * 1e3:7.1f} ms, RSS {rss:.0f} MiB, quit {took * 1e3:7.1f} ms"
                f" (UI gone after {self.last_ui_gone * 1e3:.1f} ms)",
                flush=True,
            )

    # ------------------------------------------------------------------------------- early

    def group_early(self) -> None:
        runs = self.args.runs or (1 if self.args.quick else 3)
        print(
            f"\n== early: the first tree open at once after the first frame vs after {SETTLE:.0f} s"
            f" ({EARLY_SIZE}, {runs} runs each)",
            flush=True,
        )
        source, marker = ensure_bench(EARLY_SIZE), latest_marker(EARLY_SIZE)
        for run, agent in self.rounds(runs):
            for settle in (0.0, SETTLE):
                self.early_run(agent, source, marker, run, settle)

    def early_run(self, agent: Agent, source: Path, marker: str, run: int, settle: float) -> None:
        """The first tree open of a run, ``settle`` seconds after the first frame: at once
        (while whatever the agent still loads in the background competes for the
        interpreter) or once nothing loads any more (issue 28)."""
        with self.run_scope("early", agent) as scratch:
            session = copy_for_run(source, scratch.root)
            spawned = self.launch(agent, scratch, session)
            self.term.wait_text(marker, timeout=self.args.open_timeout)
            self.term.wait_for(
                lambda s: agent.ready.search(s) is not None, 120, what=f"{agent.name} ready"
            )
            if settle:
                time.sleep(settle)
                self.term.wait_quiet(0.3, timeout=60)
            took = self.open_tree(agent)
            opened_at = time.monotonic() - spawned
            measure = "tree_open_settled" if settle else "tree_open_early"
            self.results.add(measure, EARLY_SIZE, agent.name, took)
            print(
                f"  {agent.name:5} run {run}: first tree open {took * 1e3:7.1f} ms, "
                f"{opened_at:.1f} s after start",
                flush=True,
            )
            self.term.wait_quiet(0.3, timeout=60)
            self.close_tree(agent)
            self.quit(agent)

    # ------------------------------------------------------------------------------ stream

    def group_stream(self) -> None:
        runs = self.args.runs or (1 if self.args.quick else 2)
        print(
            f"\n== stream: {STREAM_BYTES // 1024} KB Markdown at {STREAM_RATE:.0f} tokens/s "
            f"({runs} runs)",
            flush=True,
        )
        for run, agent in self.rounds(runs):
            self.stream_run(agent, run)

    def start_reply(
        self, agent: Agent, scratch: Scratch, text: str, rate: float | None, prompt: str
    ) -> tuple[int, float]:
        self.server.reset(fixed(text, rate=rate))
        self.launch(agent, scratch)
        self.ready(agent)
        pid = self.pid(agent)
        self.type_prompt(prompt)
        at = self.term.send("Enter")
        return pid, at

    def stream_run(self, agent: Agent, run: int) -> None:
        end = f"ZZEND{run}x"
        text = markdown_reply(target_bytes=STREAM_BYTES, seed=100 + run, begin="ZZBEGIN", end=end)
        with self.run_scope("stream", agent) as scratch:
            pid, _ = self.start_reply(agent, scratch, text, STREAM_RATE, f"zqstream go {run}")
            self.term.watch("begin", lambda s: "ZZBEGIN" in s)
            self.term.watch("end", lambda s, e=end: e in s)
            echoes: list[float] = []
            with CpuSampler(pid) as sampler:
                if not self.server.wait_requests(1, 60):
                    raise TerminalError("no request reached the model")
                log = self.server.requests[0]
                while log.first_chunk is None:
                    time.sleep(0.002)
                typed = ""
                letters = "abcdefghijklmnoprstuvwy"
                while log.last_chunk is None:
                    if not typed or len(typed) >= 40:
                        if typed:
                            self.term.send(*["BSpace"] * len(typed))
                            self.term.wait_for(lambda s, t=typed: t not in s, timeout=60)
                        typed = "zqk"
                        self.term.send(typed, literal=True)
                        self.term.wait_text(typed, timeout=60)
                        continue
                    typed += letters[len(typed) % len(letters)]
                    sent = self.term.send(typed[-1], literal=True)
                    seen = self.term.wait_text(typed, timeout=60)
                    echoes.append(seen.at - sent)
                    time.sleep(self.rng.uniform(0.05, 0.15))
                last = log.last_chunk
                assert last is not None and log.first_chunk is not None
                cpu = sampler.percent(log.first_chunk, last)
                if "end" not in self.term.seen:
                    with contextlib.suppress(TerminalError):
                        self.term.wait_text(end, timeout=self.args.lag_timeout)
            self.results.add("key_echo_stream", "-", agent.name, echoes)
            if cpu is not None:
                self.results.add("stream_cpu", "-", agent.name, cpu)
            e = stats(echoes)
            echo = (
                f"key echo median {e.get('median', 0) * 1e3:7.1f} ms p95 "
                f"{e.get('p95', 0) * 1e3:7.1f} ms (n={len(echoes)}), CPU {cpu or 0:5.1f}% "
                f"(stream {last - log.first_chunk:.1f} s)"
            )
            if "end" not in self.term.seen:
                waited = time.monotonic() - last
                self.results.add("stream_end_lag_timeout", "-", agent.name, waited)
                print(
                    f"  {agent.name:5} run {run}: {echo}; the end not on screen "
                    f"{waited:.0f} s after the last chunk (gave up)",
                    flush=True,
                )
                return
            shown = self.term.seen["end"]
            lag = shown - last
            first_shown = self.term.seen.get("begin", shown) - log.first_chunk
            self.results.add("stream_end_lag", "-", agent.name, lag)
            self.results.add("stream_first_token", "-", agent.name, first_shown)
            print(f"  {agent.name:5} run {run}: {echo}, end lag {lag * 1e3:8.1f} ms", flush=True)
            self.idle(agent)
            self.term.send(*["BSpace"] * len(typed))  # pi exits on Ctrl+D only when empty
            self.term.wait_for(agent.editor_empty, timeout=60, what="an empty editor")
            self.quit(agent)

    # -------------------------------------------------------------------------- throughput

    def group_throughput(self) -> None:
        runs = self.args.runs or (1 if self.args.quick else 2)
        print(
            f"\n== throughput: {', '.join(f'{t // 1000}k' for t in THROUGHPUT_TOKENS)}-token "
            f"replies as fast as possible (up to {runs} runs)",
            flush=True,
        )
        too_slow: dict[str, float] = {}
        for tokens in THROUGHPUT_TOKENS:
            key = f"{tokens // 1000}k"
            text = markdown_reply(
                target_tokens=tokens, seed=tokens, begin="ZZBEGIN", end=f"ZZEND{key}x"
            )
            raws = [raw_stream_seconds(self.server, fixed(text)) for _ in range(3)]
            raw = statistics.median(r["received_s"] for r in raws)
            self.results.add("raw_stream", key, "raw", [r["received_s"] for r in raws])
            print(
                f"  raw stream {key}: {raw * 1e3:.1f} ms first -> last chunk received "
                f"({int(raws[0]['chunks'])} chunks)",
                flush=True,
            )
            floors = client_stream_seconds(self.server, fixed(text), 3)
            self.results.add("client_stream", key, "http", floors)
            floor = statistics.median(floors)
            print(
                f"  HTTP alone {key}: {floor * 1e3:.1f} ms ({floor / raw:.1f}x raw; httpx "
                "transport in its own process, nothing parsed)",
                flush=True,
            )
            repeat = {name: True for name in self.agents}
            for run, agent in self.rounds(runs):
                if not repeat[agent.name]:
                    continue
                if agent.name in too_slow:
                    # a longer reply than one that already took > SLOW_RUN (or timed
                    # out): not run, reported as slower than that one
                    self.results.add("stream_total_timeout", key, agent.name, too_slow[agent.name])
                    print(
                        f"  {agent.name:5} {key}: not run (a shorter reply took "
                        f"> {too_slow[agent.name]:.0f} s)",
                        flush=True,
                    )
                    repeat[agent.name] = False
                    continue
                took = self.throughput_run(agent, key, text, run)
                if took is None or took > SLOW_RUN:
                    repeat[agent.name] = False  # not repeated
                    too_slow[agent.name] = took if took is not None else self.args.stream_timeout

    def throughput_run(self, agent: Agent, key: str, text: str, run: int) -> float | None:
        end = f"ZZEND{key}x"
        total: float | None = None
        cap = self.args.stream_timeout
        with self.run_scope(f"throughput {key}", agent) as scratch:
            pid, _ = self.start_reply(agent, scratch, text, None, f"zqfast {key} {run}")
            self.term.watch("begin", lambda s: "ZZBEGIN" in s)
            with CpuSampler(pid, interval=0.1) as sampler:
                if not self.server.wait_requests(1, 60):
                    raise TerminalError("no request reached the model")
                log = self.server.requests[0]
                try:
                    seen = self.term.wait_text(end, timeout=cap)
                except TerminalError:
                    self.results.add("stream_total_timeout", key, agent.name, cap)
                    print(
                        f"  {agent.name:5} {key} run {run}: not finished after {cap:.0f} s",
                        flush=True,
                    )
                    return None
            assert log.first_chunk is not None and log.last_chunk is not None
            total = seen.at - log.first_chunk
            first = self.term.seen.get("begin", seen.at) - log.first_chunk
            cpu = sampler.percent(log.first_chunk, seen.at)
            self.results.add("stream_total", key, agent.name, total)
            self.results.add("stream_total_first", key, agent.name, first)
            if cpu is not None:
                self.results.add("stream_total_cpu", key, agent.name, cpu)
            print(
                f"  {agent.name:5} {key} run {run}: first -> last token on screen "
                f"{total * 1e3:9.1f} ms (sent in {(log.last_chunk - log.first_chunk) * 1e3:.1f}"
                f" ms; first token shown after {first * 1e3:.1f} ms; CPU {cpu or 0:.0f}%)",
                flush=True,
            )
            try:
                self.idle(agent, timeout=60)
                self.quit(agent, timeout=60)
            except TerminalError:
                pass
        return total

    # ----------------------------------------------------------------------------- session

    def group_session(self) -> None:
        sizes = self.args.sizes
        print(f"\n== session: first frame, tool rounds, tree ({', '.join(sizes)})", flush=True)
        self.first_frame_floor(self.args.runs or (2 if self.args.quick else 5))
        for size in sizes:
            if size == "real":
                source, marker = make_pi_session(), PI_REAL_MARKER
            else:
                source, marker = ensure_bench(size), latest_marker(size)
            runs = self.args.runs or self.session_runs(size)
            print(
                f"  -- {size}: {source.name} ({source.stat().st_size / 1e6:.1f} MB), {runs} runs",
                flush=True,
            )
            for run, agent in self.rounds(runs):
                self.session_run(agent, size, source, marker, run)

    def first_frame_floor(self, runs: int) -> None:
        """What any Textual app pays before its first frame on this machine: the interpreter,
        Textual's imports and one screen with one line (no session, no pitui), measured as the
        sessions' first frames are (spawn -> text on screen)."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        for _ in range(runs):
            at = time.monotonic()
            self.term.unwatch_all()
            self.term.run([sys.executable, "-c", BARE_TEXTUAL], env, cwd=str(HERE))
            try:
                seen = self.term.wait_text(BARE_MARK, timeout=60)
            except TerminalError as exc:
                self.results.error("first frame floor", "textual", exc)
                return
            finally:
                self.term.stop_program()
            self.results.add("first_frame_floor", "-", "textual", seen.at - at)
        floor = median_of(self.results, "first_frame_floor", "-", "textual")
        if floor:
            print(
                f"  bare Textual app: first frame {floor * 1e3:.1f} ms (median of {runs}; "
                "the floor under any session size)",
                flush=True,
            )

    def session_runs(self, size: str) -> int:
        if self.args.quick:
            return 1
        return {"2k": 2, "20k": 3, "200k": 2, "1m": 1, "real": 2}[size]

    def session_run(self, agent: Agent, size: str, source: Path, marker: str, run: int) -> None:
        with self.run_scope(f"session {size}", agent) as scratch:
            session = copy_for_run(source, scratch.root)
            spawned = self.launch(agent, scratch, session)
            seen = self.term.wait_text(marker, timeout=self.args.open_timeout)
            first = seen.at - spawned
            pid = self.pid(agent)
            rss_first = rss_mib(pid)
            self.results.add("first_frame", size, agent.name, first)
            self.results.add("rss_first_frame", size, agent.name, rss_first)
            self.ready(agent, timeout=self.args.open_timeout)
            line = (
                f"  {agent.name:5} {size:>4} run {run}: first frame {first * 1e3:8.1f} ms "
                f"(RSS {rss_first:.0f} MiB)"
            )
            print(line, flush=True)
            if os.environ.get("PITUI_BENCH_FIRST_FRAME_ONLY"):
                self.quit(agent, timeout=120)
                return
            if size != "real":
                self.tool_rounds(agent, size)
            self.tree(agent, size, pid)
            if size in SEARCH_SIZES:
                self.tree_search(agent, size)
            if size in EARLIER_SIZES and agent.name == "pitui" and run == 0:
                self.earlier(agent, size, pid)
            took = self.quit(agent, timeout=120)
            self.results.add("quit_session", size, agent.name, took)
            self.results.add("rss_peak", size, agent.name, self.peak.get(pid, 0.0))

    def tool_rounds(self, agent: Agent, size: str) -> None:
        """A prompt answered by TOOL_ROUNDS ``read`` calls of a 48-byte file: per round, from
        the reply with the tool call fully sent to the next request arriving (the agent ends
        the stream, stores the message, runs the tool, stores the result, projects the
        context and sends it). The tool's own runtime (a tiny file read) is not subtracted."""
        prompt = "zqtools run"
        rounds = TOOL_ROUNDS // 2 if size in BIG else TOOL_ROUNDS
        self.server.reset(tool_loop(rounds, "notes.txt", prompt, final="zqtools done"))
        self.type_prompt(prompt)
        self.term.send("Enter")
        # wait as long as requests keep coming (pi at 1M takes many seconds per round)
        seen, last_progress = 0, time.monotonic()
        while sum(1 for r in self.server.requests if r.tag == "final") == 0:
            if len(self.server.requests) != seen:
                seen, last_progress = len(self.server.requests), time.monotonic()
            if time.monotonic() - last_progress > 180:
                raise TerminalError(f"the tool loop stalled ({seen} requests)")
            time.sleep(0.05)
        self.term.wait_text("zqtools done", timeout=120)
        logs = [r for r in self.server.requests if r.tag in ("tool", "final")]
        others = sum(1 for r in self.server.requests if r.tag == "other")
        gaps = []
        for before, after in itertools.pairwise(logs):
            assert before.done is not None
            gaps.append(after.arrived - before.done)
        if len(gaps) != rounds:
            raise TerminalError(f"{len(gaps)} tool rounds instead of {rounds}")
        self.results.add("tool_round", size, agent.name, statistics.median(gaps))
        self.results.add("tool_round_all", size, agent.name, gaps)
        self.results.add("request_bytes", size, agent.name, float(logs[-1].body_bytes))
        self.idle(agent)
        print(
            f"        tool round median {statistics.median(gaps) * 1e3:7.1f} ms "
            f"(min {min(gaps) * 1e3:.1f}, max {max(gaps) * 1e3:.1f}; request "
            f"{logs[-1].body_bytes / 1e3:.0f} KB, {logs[-1].messages} messages"
            + (f"; {others} other requests (compaction?)" if others else "")
            + ")",
            flush=True,
        )

    def open_tree(self, agent: Agent, timeout: float = 120.0) -> float:
        return self.timed(
            lambda: self.term.send(agent.tree_key),
            lambda s: agent.tree_shown(s) and agent.tree_status(s) is not None,
            timeout=timeout,
            what=f"{agent.name} tree",
        )

    def close_tree(self, agent: Agent) -> float:
        return self.timed(
            lambda: self.term.send("Escape"),
            lambda s: not agent.tree_shown(s),
            timeout=60,
            what="the tree to close",
        )

    def open_search(self, agent: Agent) -> None:
        """Into the tree's search field (pitui's tree searches as you type: no key)."""
        for key in agent.search_keys:
            self.term.send(key)
        if agent.search_keys:
            self.term.wait_for(
                lambda s: agent.search_shows(s, ""), timeout=30, what="the search field"
            )

    def clear_search(self, agent: Agent, query: str, total: int) -> float:
        """Escape -> the query is gone and the tree shows all ``total`` rows again."""
        return self.timed(
            lambda: self.term.send("Escape"),
            lambda s: (
                not agent.search_shows(s, query)
                and agent.tree_shown(s)
                and (agent.tree_status(s) or (0, 0))[1] == total
            ),
            timeout=120,
            what="the search to clear",
        )

    def tree(self, agent: Agent, size: str, pid: int) -> None:
        opens, closes, keys, growth = [], [], [], []
        big = size in BIG
        # Three opens at every size: with two, the "median" was the mean of the cold open
        # (the layout, 2.2 s at 1M) and a warm one (~14 ms), and said 1.1 s.
        for _cycle in range(TREE_CYCLES):
            before = rss_mib(pid)
            opens.append(self.open_tree(agent, timeout=600 if big else 120))
            self.term.wait_quiet(0.3, timeout=60)
            after = rss_mib(pid)
            growth.append(after - before)
            self.peak[pid] = max(self.peak.get(pid, 0.0), hwm_mib(pid))
            for k in range(TREE_KEYS // 2 if big else TREE_KEYS):
                status = agent.tree_status(self.term.capture())
                assert status is not None
                i, n = status
                down = k % 2 == 0
                want = (i % n) + 1 if down else ((i - 2) % n) + 1
                keys.append(
                    self.timed(
                        lambda d=down: self.term.send("Down" if d else "Up"),
                        lambda s, w=want, n=n: agent.tree_status(s) == (w, n),
                        timeout=120,
                        what=f"tree row {want}/{n}",
                    )
                )
                self.term.wait_quiet(0.1, timeout=30)
            closes.append(self.close_tree(agent))
            self.term.wait_quiet(0.3, timeout=60)
        self.results.add("tree_open", size, agent.name, statistics.median(opens))
        self.results.add("tree_open_cold", size, agent.name, opens[0])
        self.results.add("tree_close", size, agent.name, statistics.median(closes))
        self.results.add("tree_key", size, agent.name, statistics.median(keys))
        self.results.add("tree_key_all", size, agent.name, keys)
        self.results.add("tree_rss_growth", size, agent.name, growth[0])
        print(
            f"        tree open {opens[0] * 1e3:.1f} ms cold, {statistics.median(opens) * 1e3:.1f}"
            f" median; key {statistics.median(keys) * 1e3:.1f} ms (max {max(keys) * 1e3:.1f});"
            f" close {statistics.median(closes) * 1e3:.1f} ms; RSS +{growth[0]:.0f} MiB on "
            f"first open",
            flush=True,
        )

    def tree_search(self, agent: Agent, size: str) -> None:
        """A cold search typed in one burst (results), Esc (clear), then a common query typed
        at a human pace, timing every key's echo (are keys blocked while it searches?)."""
        self.open_tree(agent)
        self.term.wait_quiet(0.3, timeout=60)
        status = agent.tree_status(self.term.capture())
        assert status is not None
        total = status[1]
        self.open_search(agent)
        query = "zqlatest"
        results = self.timed(
            lambda: self.term.send(query, literal=True),
            lambda s: agent.search_shows(s, query) and agent.tree_status(s) == (1, 1),
            timeout=120,
            what="the search results",
        )
        self.term.wait_quiet(0.2, timeout=60)
        clear = self.clear_search(agent, query, total)
        self.term.wait_quiet(0.3, timeout=60)
        # typed at ~8 keys/s; each echo timed while earlier keys' searches may run
        self.open_search(agent)
        phrase = "session"
        echoes = []
        for i in range(1, len(phrase) + 1):
            sent = self.term.send(phrase[i - 1], literal=True)
            seen = self.term.wait_for(
                lambda s, q=phrase[:i]: agent.search_shows(s, q),
                timeout=120,
                what=f"search {phrase[:i]!r}",
            )
            echoes.append(seen.at - sent)
            pause = sent + 0.125 - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        self.term.wait_quiet(0.3, timeout=120)
        clear2 = self.clear_search(agent, phrase, total)
        self.term.wait_quiet(0.3, timeout=60)
        self.close_tree(agent)
        self.term.wait_quiet(0.3, timeout=60)
        self.results.add("search_results", size, agent.name, results)
        self.results.add("search_clear", size, agent.name, max(clear, clear2))
        self.results.add("search_key_max", size, agent.name, max(echoes))
        self.results.add("search_key_all", size, agent.name, echoes)
        print(
            f"        search: results {results * 1e3:.1f} ms, clear {clear * 1e3:.1f} / "
            f"{clear2 * 1e3:.1f} ms, keys while searching max {max(echoes) * 1e3:.1f} ms "
            f"(median {statistics.median(echoes) * 1e3:.1f})",
            flush=True,
        )

    def scroll_to(self, pattern: re.Pattern[str], up: bool, timeout: float = 180.0) -> None:
        """Turn the mouse wheel over the chat until ``pattern`` is on screen (not timed)."""
        deadline = time.monotonic() + timeout
        while pattern.search(self.term.capture()) is None:
            if time.monotonic() > deadline:
                raise TerminalError(f"scrolled for {timeout:.0f} s without seeing {pattern}")
            at = self.term.wheel(self.term.width // 2, 3, up=up, count=20)
            # let the app catch up before looking again (never queue thousands); nothing
            # moves once at the end
            with contextlib.suppress(TerminalError):
                self.term.wait_settled(at, quiet=0.25, timeout=20)
        self.term.wait_quiet(0.3, timeout=60)

    def settle(self, pid: int, quiet: float = 1.0, timeout: float = 120.0) -> float:
        """Wait until ``pid`` used less than 5% of a core for ``quiet`` seconds; how long."""
        start = time.monotonic()
        last, quiet_since = cpu_seconds(pid), start
        while time.monotonic() - quiet_since < quiet and time.monotonic() - start < timeout:
            time.sleep(0.2)
            now = cpu_seconds(pid)
            if now - last > 0.01:
                quiet_since = time.monotonic()
            last = now
        return time.monotonic() - start

    def earlier(self, agent: Agent, size: str, pid: int) -> None:
        """pitui's "Show N earlier entries", clicked 6 times (scrolled to the top each time)."""
        button = re.compile(r"Show ([\d,]+) earlier entries")
        times, growth = [], []
        # What pitui does after the first frame (the provider layer's import, ~200 MB; the
        # branch position and the entry count in threads; the checkpoint index) is not what
        # a click costs: wait until the process has been idle for a second.
        settled_after = self.settle(pid)
        start_rss = rss_mib(pid)
        for _click in range(EARLIER_CLICKS):
            self.scroll_to(button, up=True)
            self.term.wait_quiet(0.3, timeout=60)
            screen = self.term.capture()
            lines = screen.splitlines()
            row = next(i for i, line in enumerate(lines) if button.search(line))
            match = button.search(lines[row])
            assert match is not None
            col = match.start() + 2
            label = match.group(0)
            before = rss_mib(pid)
            at = self.term.click(col, row)
            # Done when the old label has gone (the button shows the new count, or pitui has
            # scrolled to the entries it loaded) and the screen has then settled. (Quiet alone
            # is not enough: the app writes nothing while it builds the blocks.)
            self.term.wait_for(
                lambda s, old=label: old not in s, timeout=300, what="the earlier entries"
            )
            done = self.term.wait_settled(at, quiet=0.3, timeout=120)
            times.append(done - at)
            growth.append(rss_mib(pid) - before)
        total = rss_mib(pid) - start_rss
        self.results.add("earlier_click", size, agent.name, times)
        self.results.add("earlier_rss", size, agent.name, growth)
        self.results.add("earlier_rss_total", size, agent.name, total)
        print(
            "        'Show earlier' clicks: "
            + ", ".join(f"{t * 1e3:.0f}" for t in times)
            + f" ms; RSS +{total:.0f} MiB over {EARLIER_CLICKS} clicks (after the app had"
            f" been busy {settled_after:.1f} s after start-up)",
            flush=True,
        )


# ---------------------------------------------------------------------------------- targets


@dataclass
class Target:
    measure: str
    key: str
    title: str
    unit: str  # "ms", "s", "MiB", "%"
    issue: str
    rule: str  # "lt" (pitui < value), "p95" (pitui p95 < value), "pi" (pitui <= value*pi),
    # "pi+" (pitui <= pi + value), "raw" (pitui <= value*raw), "size" (pitui at key <=
    # value*pitui at other_key), "vs" (pitui <= value*pitui's other_measure), "" (info)
    value: float = 0.0
    other_key: str = ""
    text: str = ""
    other_measure: str = ""


TARGETS: list[Target] = [
    Target(
        "enter_to_spinner",
        "-",
        "Enter -> message + spinner, first request",
        "ms",
        "11",
        "lt",
        0.100,
        text="< 100 ms",
    ),
    Target(
        "enter_to_request",
        "-",
        "Enter -> request reaches the model, prompt typed 0.5 s after the first frame",
        "ms",
        "28",
        "pi+",
        0.050,
        text="<= pi + 50 ms",
    ),
    Target(
        "rss_after_request",
        "-",
        "RSS after one request",
        "MiB",
        "28",
        "pi",
        1.2,
        text="<= 1.2x pi",
    ),
    Target(
        "tree_open_early",
        EARLY_SIZE,
        "first tree open at once after the first frame vs 5 s later",
        "ms",
        "28",
        "vs",
        1.25,
        text="<= 1.25x the settled one",
        other_measure="tree_open_settled",
    ),
    Target(
        "key_echo_stream",
        "-",
        "key echo during a 32 KB reply @500 tok/s: median",
        "ms",
        "11/16",
        "lt",
        0.030,
        text="< 30 ms",
    ),
    Target(
        "key_echo_stream",
        "-",
        "key echo during a 32 KB reply @500 tok/s: p95",
        "ms",
        "11/16",
        "p95",
        0.100,
        text="p95 < 100 ms",
    ),
    Target(
        "stream_end_lag",
        "-",
        "last chunk sent -> last chunk on screen (@500 tok/s)",
        "ms",
        "11",
        "lt",
        0.100,
        text="< 100 ms",
    ),
    Target(
        "stream_cpu",
        "-",
        "CPU of the agent process at 500 tok/s",
        "%",
        "16",
        "lt",
        50.0,
        text="< 50% of a core",
    ),
    Target("quit_ui_gone", "-", "quit: the UI off the screen (info)", "ms", "11", ""),
    Target(
        "quit_after_request",
        "-",
        "quit after a model request (exited, terminal back)",
        "ms",
        "11",
        "lt",
        0.200,
        text="< 200 ms",
    ),
    Target(
        "quit_after_request",
        "-",
        "quit after a model request, beside pi",
        "ms",
        "28",
        "pi",
        1.0,
        text="<= pi",
    ),
    *[
        Target(
            "stream_total",
            k,
            f"first -> last token on screen, {k} tokens, max speed",
            "ms",
            "16",
            "raw",
            1.5,
            text="<= 1.5x raw stream",
        )
        for k in ("5k", "20k", "40k")
    ],
    Target(
        "stream_total",
        "20k",
        "first -> last token on screen, 20k tokens, vs httpx reading the same stream",
        "ms",
        "28",
        "http",
        1.5,
        text="<= 1.5x httpx alone",
    ),
    Target(
        "tree_open",
        "20k",
        "tree open (tree key -> tree shown)",
        "ms",
        "11",
        "lt",
        0.050,
        text="< 50 ms",
    ),
    Target(
        "tree_key",
        "20k",
        "tree key (Down/Up -> row moved)",
        "ms",
        "11",
        "lt",
        0.016,
        text="< 16 ms",
    ),
    Target(
        "tree_close",
        "20k",
        "tree close (Esc -> chat back)",
        "ms",
        "11",
        "lt",
        0.030,
        text="< 30 ms",
    ),
    *[
        Target(
            "first_frame",
            k,
            "first frame with the latest prompt",
            "ms",
            "16",
            "pi",
            0.5,
            text="<= 0.5x pi",
        )
        for k in ("20k", "200k", "1m")
    ],
    *[
        Target(
            "first_frame",
            k,
            "first frame with the latest prompt",
            "ms",
            "11",
            "pi",
            1.0,
            text="<= pi",
        )
        for k in ("200k", "real")
    ],
    Target(
        "tool_round",
        "1m",
        "per tool round, 1M vs 2k (pitui)",
        "ms",
        "16",
        "size",
        1.2,
        other_key="2k",
        text="<= 1.2x pitui at 2k",
    ),
    Target(
        "search_results",
        "200k",
        "tree search results (query typed in one burst)",
        "ms",
        "16",
        "lt",
        0.5,
        text="< 500 ms",
    ),
    Target(
        "search_key_max",
        "200k",
        "tree search: slowest key echo while searching",
        "ms",
        "16",
        "lt",
        0.050,
        text="< 50 ms",
    ),
    Target(
        "search_clear",
        "200k",
        "tree search: Esc -> all rows back",
        "ms",
        "16",
        "lt",
        0.050,
        text="< 50 ms (keys never blocked)",
    ),
    Target(
        "earlier_click",
        "200k",
        "'Show N earlier entries': 6th click vs 1st",
        "ms",
        "16",
        "click",
        1.2,
        text="6th <= 1.2x 1st",
    ),
    Target(
        "earlier_rss_total",
        "200k",
        "'Show N earlier entries': RSS growth over 6 clicks",
        "MiB",
        "16",
        "lt",
        50.0,
        text="< 50 MiB (bounded)",
    ),
    Target(
        "tree_rss_growth",
        "1m",
        "RSS added by opening the tree",
        "MiB",
        "16",
        "lt",
        100.0,
        text="< 100 MiB",
    ),
]

CURVES = [  # measure, title, unit: printed per size for every size measured
    ("first_frame", "first frame with the latest prompt", "ms"),
    ("rss_first_frame", "RSS at the first frame", "MiB"),
    ("tool_round", "per tool round (read, trivial): reply done -> next request", "ms"),
    ("tree_open_cold", "tree open, first time", "ms"),
    ("tree_open", "tree open, median of 3", "ms"),
    ("tree_key", "tree key", "ms"),
    ("tree_close", "tree close", "ms"),
    ("tree_rss_growth", "RSS added by the first tree open", "MiB"),
    ("search_results", "tree search results", "ms"),
    ("search_key_max", "tree search: slowest key echo", "ms"),
    ("search_clear", "tree search: Esc to clear", "ms"),
    ("quit_session", "quit after the tool rounds", "ms"),
    ("rss_peak", "peak RSS (VmHWM) with the tree open", "MiB"),
]


def calibration_text(cal: dict[str, Any]) -> str:
    """One line for a size's calibration (a figure that could not be measured says why)."""
    names = (
        ("capture_rtt_ms", "capture round trip"),
        ("key_echo_floor_ms", "key -> echo through cat"),
        ("write_to_seen_ms", "program write -> seen"),
    )
    parts = []
    for key, title in names:
        value = cal.get(key) or {}
        if "median" in value:
            parts.append(f"{title} median {value['median']:.2f} ms (p95 {value['p95']:.2f})")
        else:
            parts.append(f"{title}: not measured ({value.get('error', 'no samples')})")
    return "; ".join(parts)


MEASURE_GROUPS = {
    "enter_to_spinner": "first",
    "enter_to_request": "first",
    "startup_ready": "first",
    "quit_ui_gone": "first",
    "quit_after_request": "first",
    "key_echo_stream": "stream",
    "stream_end_lag": "stream",
    "stream_cpu": "stream",
    "stream_first_token": "stream",
    "stream_total": "throughput",
}
"""The group that measures each target (the rest: ``session``)."""


def group_of(measure: str) -> str:
    return MEASURE_GROUPS.get(measure, "session")


def missing_reason(results: Results, measure: str, key: str, agent: str) -> str:
    """Why ``agent`` has no figure for ``measure`` at ``key``: its group did not run, or what
    failed in the runs that were to measure it (the first error, and how many there were)."""
    group = group_of(measure)
    ran = results.extra.get("groups_run")
    if ran is not None and group not in ran:
        return f"{group} not run"
    sized = group in ("session", "throughput") and key != "-"
    failed = [
        e
        for e in results.errors
        if e["agent"] in (agent, "-")
        and (e["where"].split(" ")[0] in (group, "group") or e["where"] == f"group {group}")
        and (not sized or key in e["where"].split(" ") or e["where"].startswith("group"))
    ]
    if not failed:
        sizes = results.extra.get("sizes_run")
        if sized and sizes is not None and key not in sizes:
            return f"size {key} not run"
        return "no sample (the run measured nothing for it)"
    first = failed[0]["error"].splitlines()[0][:140]
    more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"{agent}: {failed[0]['where']}: {first}{more}"


def scale(value: float, unit: str) -> float:
    return value * 1e3 if unit == "ms" else value


def fmt(value: float | None, unit: str, scaled: bool = False) -> str:
    """A sample (seconds for "ms") or, with `scaled`, a value already in `unit`."""
    if value is None:
        return "n/a"
    v = value if scaled else scale(value, unit)
    if unit == "ms":
        return f"{v:.1f}" if v < 1000 else f"{v:,.0f}"
    return f"{v:.1f}" if v < 100 else f"{v:,.0f}"


def median_of(results: Results, measure: str, key: str, agent: str) -> float | None:
    values = results.get(measure, key, agent)
    return statistics.median(values) if values else None


def p95_of(results: Results, measure: str, key: str, agent: str) -> float | None:
    values = results.get(measure, key, agent)
    return stats(values)["p95"] if values else None


def evaluate(results: Results) -> list[dict[str, Any]]:
    rows = []
    for t in TARGETS:
        use_p95 = t.rule == "p95"
        pick = p95_of if use_p95 else median_of
        ours = pick(results, t.measure, t.key, "pitui")
        pi = pick(results, t.measure, t.key, "pi")
        extra = ""
        if t.measure == "stream_end_lag" and not results.get(t.measure, t.key, "pitui"):
            capped = results.get("stream_end_lag_timeout", t.key, "pitui")
            if capped:
                extra = f"> {min(capped):.0f} s (gave up)"
        if t.measure == "stream_total" and not results.get(t.measure, t.key, "pitui"):
            capped = results.get("stream_total_timeout", t.key, "pitui")
            if capped:
                extra = f"> {min(capped):.0f} s (not finished or not run)"
        if t.measure == "earlier_click":
            clicks = results.get(t.measure, t.key, "pitui")
            ours = clicks[EARLIER_CLICKS - 1] if len(clicks) >= EARLIER_CLICKS else None
            pi = None
        ratio = ours / pi if ours is not None and pi else None
        verdict = ""
        if t.rule:
            verdict = "n/a"
            if t.rule in ("lt", "p95") and ours is not None:
                verdict = "PASS" if ours < t.value else "FAIL"
            elif t.rule == "pi" and ours is not None and pi:
                verdict = "PASS" if ours <= t.value * pi else "FAIL"
                if t.measure == "first_frame":
                    floor = median_of(results, "first_frame_floor", "-", "textual")
                    if floor:
                        extra = f"a bare Textual app {floor * 1e3:.0f} ms ({floor / pi:.2f}x pi)"
            elif t.rule == "pi+" and ours is not None and pi:
                verdict = "PASS" if ours <= pi + t.value else "FAIL"
            elif t.rule == "vs" and ours is not None:
                other = median_of(results, t.other_measure, t.key, "pitui")
                if other:
                    verdict = "PASS" if ours <= t.value * other else "FAIL"
                    extra = f"settled {other * 1e3:.1f} ms; early/settled {ours / other:.2f}x"
            elif t.rule == "raw" and ours is not None:
                raw = median_of(results, "raw_stream", t.key, "raw")
                if raw:
                    verdict = "PASS" if ours <= t.value * raw else "FAIL"
                    extra = f"raw {raw * 1e3:.1f} ms; pitui/raw {ours / raw:.1f}x"
                    floor = median_of(results, "client_stream", t.key, "http")
                    if floor:
                        extra += f"; HTTP alone {floor / raw:.1f}x"
            elif t.rule == "raw" and extra:
                verdict = "FAIL"
            elif t.rule == "http" and ours is not None:
                floor = median_of(results, "client_stream", t.key, "http")
                if floor:
                    verdict = "PASS" if ours <= t.value * floor else "FAIL"
                    extra = f"httpx alone {floor * 1e3:.1f} ms; pitui/httpx {ours / floor:.1f}x"
            elif t.rule == "size" and ours is not None:
                base = median_of(results, t.measure, t.other_key, "pitui")
                if base:
                    verdict = "PASS" if ours <= t.value * base else "FAIL"
                    extra = f"2k {base * 1e3:.1f} ms; 1m/2k {ours / base:.2f}x"
            elif t.rule == "click":
                clicks = results.get(t.measure, t.key, "pitui")
                if len(clicks) >= EARLIER_CLICKS:
                    verdict = "PASS" if clicks[-1] <= t.value * clicks[0] else "FAIL"
                    extra = "clicks " + "/".join(f"{c * 1e3:.0f}" for c in clicks) + " ms"
            if t.rule in ("lt", "p95") and ours is None:
                verdict = "FAIL" if extra.startswith(">") else "n/a"
        if t.measure == "key_echo_stream" and pi is None and ours is None:
            verdict = "n/a"
        # Every row says something: a figure, or why there is none.
        reasons = [
            missing_reason(results, t.measure, t.key, agent)
            for agent, value in (("pitui", ours), ("pi", pi))
            if value is None
            and agent in results.extra.get("agents_run", ("pitui", "pi"))
            and not (agent == "pi" and t.rule in ("size", "click"))
        ]
        if reasons and not extra:
            extra = "not measured: " + "; ".join(reasons)
        rows.append(
            {
                "measure": t.measure,
                "key": t.key,
                "title": t.title,
                "issue": t.issue,
                "unit": t.unit,
                # in the row's own unit (samples are kept in seconds, MiB and %)
                "pitui": None if ours is None else scale(ours, t.unit),
                "pi": None if pi is None else scale(pi, t.unit),
                "ratio": ratio,
                "target": t.text,
                "verdict": verdict,
                "note": extra,
                "stat": "p95" if use_p95 else "median",
            }
        )
    return rows


def print_report(results: Results, rows: list[dict[str, Any]], sizes: list[str]) -> None:
    print("\n" + "=" * 140)
    print("TUI benchmarks: pitui vs pi 1.6 in tmux, same scripted model (medians unless p95)")
    header = (
        f"{'measure':<58} {'size':>5} {'unit':>4} {'pitui':>10} {'pi':>10} "
        f"{'pitui/pi':>8}  {'target':<28} {'verdict':<7} note"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "n/a"
        print(
            f"{r['title'][:58]:<58} {r['key']:>5} {r['unit']:>4} "
            f"{fmt(r['pitui'], r['unit'], True):>10} {fmt(r['pi'], r['unit'], True):>10} "
            f"{ratio:>8}  "
            f"{r['target']:<28} {r['verdict']:<7} {r['note']}"
        )
    print("\nCurves (size -> median; pitui | pi | pitui/pi):")
    for measure, title, unit in CURVES:
        cells = []
        for size in sizes:
            a = median_of(results, measure, size, "pitui")
            b = median_of(results, measure, size, "pi")
            if a is None and b is None:
                continue
            ratio = f"{a / b:.2f}x" if a is not None and b else "n/a"
            cells.append(f"{size}: {fmt(a, unit)} | {fmt(b, unit)} | {ratio}")
        if cells:
            print(f"  {title} ({unit}):")
            print("    " + "   ".join(cells))
    others = [
        ("startup_ready", "start -> editor ready (no session)", "ms"),
        ("stream_first_token", "first chunk sent -> first token on screen (@500 tok/s)", "ms"),
    ]
    for measure, title, unit in others:
        a = median_of(results, measure, "-", "pitui")
        b = median_of(results, measure, "-", "pi")
        if a is not None or b is not None:
            print(f"  {title}: pitui {fmt(a, unit)} {unit}, pi {fmt(b, unit)} {unit}")
    loads = results.samples.get("loadavg", {})
    if loads:
        print(
            "  machine load (1-min average at the start of each run, 2 CPUs): "
            + ", ".join(
                f"{group} {statistics.median(v['machine']):.1f}" for group, v in loads.items()
            )
        )
    if results.errors:
        print(f"\n{len(results.errors)} run(s) failed:")
        for e in results.errors:
            print(f"  {e['where']} [{e['agent']}]: {e['error'].splitlines()[0][:160]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one run per measure (first: 2), sizes 2k,20k,200k,real",
    )
    parser.add_argument(
        "--groups", default=",".join(GROUPS), help=f"comma-separated, of {', '.join(GROUPS)}"
    )
    parser.add_argument(
        "--sizes",
        default=None,
        help=f"comma-separated, of {', '.join(ALL_SIZES)} (default: all; "
        "--quick: 2k,20k,200k,real)",
    )
    parser.add_argument("--agents", default="pitui,pi", help="pitui,pi (default both)")
    parser.add_argument("--runs", type=int, default=None, help="runs per agent and measure")
    parser.add_argument("--term", default="120x40", help="terminal size (default 120x40)")
    parser.add_argument(
        "--stream-timeout",
        type=float,
        default=120.0,
        help="give up on a max-speed reply after this many seconds",
    )
    parser.add_argument(
        "--lag-timeout",
        type=float,
        default=60.0,
        help="give up on a reply's end reaching the screen after this many "
        "seconds past the last chunk (the 500 tok/s stream)",
    )
    parser.add_argument("--open-timeout", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "tui-latest.json")
    args = parser.parse_args(argv)
    args.groups = [g for g in args.groups.split(",") if g]
    args.agents = [a for a in args.agents.split(",") if a]
    for g in args.groups:
        if g not in GROUPS:
            parser.error(f"unknown group {g!r}")
    for a in args.agents:
        if a not in AGENTS:
            parser.error(f"unknown agent {a!r}")
    sizes = args.sizes.split(",") if args.sizes else list(QUICK_SIZES if args.quick else ALL_SIZES)
    sizes = [s.lower() for s in sizes]
    for s in sizes:
        if s not in SIZES and s != "real":
            parser.error(f"unknown size {s!r} (of {', '.join(ALL_SIZES)})")
    args.sizes = sizes

    if "pi" in args.agents:
        ensure_pi()
    started = time.time()
    if "session" in args.groups:
        for s in sizes:
            if s == "real":
                make_pi_session()
            else:
                ensure_bench(s)

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # the private tmux server and the agents are cleaned up

    signal.signal(signal.SIGTERM, interrupted)
    bench = Bench(args)
    bench.results.extra["groups_run"] = list(args.groups)
    bench.results.extra["sizes_run"] = list(sizes)
    bench.results.extra["agents_run"] = list(args.agents)
    print(
        f"pitui TUI benchmarks: terminal {args.term}, agents {', '.join(args.agents)}; "
        f"{pi_version() if 'pi' in args.agents else ''}; Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; scripted model at {bench.server.api_base}",
        flush=True,
    )
    try:
        for group in GROUPS:
            if group in args.groups:
                try:
                    getattr(bench, f"group_{group}")()
                except Exception as exc:  # the next group still runs
                    bench.results.error(f"group {group}", "-", exc)
    except KeyboardInterrupt:
        print("\ninterrupted: reporting what was measured", flush=True)
    finally:
        bench.close()
    results = bench.results
    rows = evaluate(results)
    print_report(results, rows, sizes)
    out = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 1),
        "python": platform.python_version(),
        "pi": pi_version() if "pi" in args.agents else None,
        "cpus": os.cpu_count(),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "sizes": {s: (bench_file(s).name if s != "real" else "pi-real.jsonl") for s in sizes},
        "rows": rows,  # pitui and pi in each row's unit
        "samples_units": "times in seconds, memory in MiB, CPU in % of a core",
        "samples": results.samples,
        "calibration": results.extra.get("calibration"),
        "errors": results.errors,
        "terminal_reconnects": bench.term.reconnects,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    tmp.replace(args.out)
    print(f"\nwrote {args.out} ({out['duration_s']:.0f} s)")
    try:
        from tui_charts import write_charts

        for path in write_charts(out, args.out.parent):
            print(f"wrote {path}")
    except Exception as exc:  # a chart must never lose the results
        print(f"charts failed: {exc}")
    verdicts = [r["verdict"] for r in rows if r["verdict"]]
    print(
        f"targets: {verdicts.count('PASS')} PASS, {verdicts.count('FAIL')} FAIL, "
        f"{verdicts.count('n/a')} n/a"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
