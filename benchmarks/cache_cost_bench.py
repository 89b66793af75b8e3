"""Cost of a 50-request Claude tool loop with prompt caching: pitui's breakpoints vs pi 1.6's.

    python benchmarks/cache_cost_bench.py [--requests 50] [--json]

pitui runs a scripted tool loop (Claude Sonnet 4.5, thinking high, one ``read`` of a ~3 KB file
per request) against the local Anthropic Messages server, whose prompt cache is accounted like
the real API's (tests/support/providers/anthropic.py). For pi, the request pi 1.6 itself would
send for the same context at each step is built by pi's own code (tests/support/pi_check) and
sent to a second server with its own cache. Costs use Sonnet 4.5's prices (input $3, cache write
$3.75, cache read $0.30, output $15 per million tokens); the output of each reply counts the
same for both. Without pi 1.6 installed, pi's placement is modelled from its documented rule
(the system prompt, the last tool, the last block of the last user message) and the output says
so. Target: pitui / pi <= 1.05.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from support.pi_check import find_pi, pi_context  # noqa: E402
from support.providers import anthropic as api  # noqa: E402

from pitui.agent.session import AgentSession  # noqa: E402
from pitui.config.settings import Settings  # noqa: E402
from pitui.session import SessionStore  # noqa: E402

MODEL = "anthropic/claude-sonnet-4-5"
TARGET = 1.05


def file_text(i: int) -> str:
    lines = [f"line {n} of module {i}: value_{i}_{n} = compute({n}, {i} * {n})" for n in range(50)]
    return "\n".join(lines) + "\n"


def script(requests: int) -> list[api.Reply]:
    steps = [
        api.reply(
            api.Thinking(f"Step {i}: read the next module to follow the call chain."),
            api.Text(f"Reading module_{i}.py."),
            api.ToolUse("read", {"path": f"module_{i}.py"}),
        )
        for i in range(requests - 1)
    ]
    steps.append(api.reply(api.Thinking("All read."), api.Text("The chain ends in module 49.")))
    return steps


async def run_pitui(server: api.AnthropicServer, project: Path, requests: int) -> Path:
    store = SessionStore.create(project / "sessions", str(project))
    agent = AgentSession(
        store,
        cwd=project,
        model=MODEL,
        api_base=server.base_url,
        thinking="high",
        settings=Settings(),
    )
    server.script(*script(requests))
    result = await agent.prompt("Follow the call chain through every module_*.py file.")
    if not result.ok:
        raise SystemExit(f"the pitui run failed: {result.error}")
    path = Path(str(store.path))
    store.close()
    return path


def prefixes(path: Path) -> list[Path]:
    """One session file per request: everything before that request's reply."""
    lines = path.read_text().splitlines(keepends=True)
    out: list[Path] = []
    folder = Path(tempfile.mkdtemp(prefix="pitui-cache-bench-"))
    for n, line in enumerate(lines):
        entry = json.loads(line)
        is_reply = entry.get("type") == "message" and entry["message"].get("role") == "assistant"
        if is_reply:
            prefix = folder / f"step-{len(out):03d}.jsonl"
            prefix.write_text("".join(lines[:n]))
            out.append(prefix)
    return out


def pi_payloads(steps: list[Path]) -> list[dict[str, Any]]:
    return [pi_context(step)["payload"] for step in steps]


def modelled_pi_payloads(server: api.AnthropicServer) -> list[dict[str, Any]]:
    """pitui's own requests with the breakpoints moved where pi's documentation puts them."""
    out = []
    for request in server.requests:
        body = json.loads(json.dumps(request.body))
        for block in api.linear_blocks(body):
            block.pop("cache_control", None)
        marker = {"type": "ephemeral"}
        if body.get("system"):
            body["system"][-1]["cache_control"] = marker
        if body.get("tools"):
            body["tools"][-1]["cache_control"] = marker
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last["content"], list):
            last["content"][-1]["cache_control"] = marker
        out.append(body)
    return out


def replay(payloads: list[dict[str, Any]], outputs: list[int], key: bytes) -> list[dict[str, int]]:
    """Send pi's requests to a fresh server (empty cache, same signing key); its usage."""
    usages = []
    with api.AnthropicServer(signing_key=key) as second:
        for body, output in zip(payloads, outputs, strict=True):
            second.script(api.text("ok", output_tokens=output))
            request = urllib.request.Request(
                f"{second.base_url}/v1/messages",
                data=json.dumps({**body, "stream": True}).encode(),
                headers={"x-api-key": api.API_KEY, "anthropic-version": "2023-06-01"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    response.read()
            except urllib.error.HTTPError as error:
                raise SystemExit(
                    f"the server refused pi's request: {error.read()[:500]!r}"
                ) from None
            usages.append(dict(second.last.usage))
    return usages


def total(usages: list[dict[str, int]]) -> float:
    return sum(api.cost(u) for u in usages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ["ANTHROPIC_API_KEY"] = api.API_KEY  # the local server's key, never a real one
    project = Path(tempfile.mkdtemp(prefix="pitui-cache-bench-project-"))
    for i in range(args.requests):
        (project / f"module_{i}.py").write_text(file_text(i))
    with api.AnthropicServer() as server:
        path = asyncio.run(run_pitui(server, project, args.requests))
        mine = [dict(r.usage) for r in server.requests]
        outputs = [u["output_tokens"] for u in mine]
        pi_found = find_pi()
        if isinstance(pi_found, str):
            source = f"pi's placement modelled (pi 1.6 not available: {pi_found})"
            payloads = modelled_pi_payloads(server)
        else:
            source = "pi 1.6's own requests (pi_context.mjs)"
            payloads = pi_payloads(prefixes(path))
    theirs = replay(payloads, outputs, server.signing_key)
    uncached = sum(
        (u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]) * 3e-6
        + u["output_tokens"] * 15e-6
        for u in mine
    )
    ratio = total(mine) / total(theirs)
    result = {
        "requests": len(mine),
        "pitui_cost": round(total(mine), 4),
        "pi_cost": round(total(theirs), 4),
        "no_cache_cost": round(uncached, 4),
        "ratio": round(ratio, 4),
        "pi_source": source,
        "pitui_cache_read_tokens": sum(u["cache_read_input_tokens"] for u in mine),
        "pi_cache_read_tokens": sum(u["cache_read_input_tokens"] for u in theirs),
        "pass": ratio <= TARGET,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['requests']}-request Claude Sonnet 4.5 tool loop: "
            f"pitui ${result['pitui_cost']:.4f}, pi ${result['pi_cost']:.4f} ({source}), "
            f"without caching ${result['no_cache_cost']:.4f}; ratio pitui/pi {ratio:.3f} "
            f"(target <= {TARGET}): {'PASS' if result['pass'] else 'FAIL'}"
        )
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
