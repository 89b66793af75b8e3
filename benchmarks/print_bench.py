"""`pitui -p "hi"` beside `pi -p "hi"` on the same scripted OpenAI-compatible server: the whole
process's wall time, CPU time and peak RSS (issue 28's targets: wall and CPU <= 1.0x pi's, RSS
<= 1.2x pi's).

    python benchmarks/print_bench.py [--runs 7] [--out FILE]
    PITUI_BENCH_ROOT=DIR python benchmarks/print_bench.py   (the pitui of another checkout)

Runs alternate (pitui, pi, pi, pitui, ...) so a change in the machine's load hits both alike;
each run is a fresh process with its own scratch folders (tui_agents), measured by a wrapper
process of its own (``RUSAGE_CHILDREN`` is then that run alone). ``PITUI_BENCH_ROOT`` runs
the pitui of another checkout (e.g. a worktree of an older commit, for a before/after). The model
answers one short line; pitui and pi send their whole system prompt and tools, as a user's
first `-p` would. Prints medians (min-max) and the ratios, and writes the samples to
``results/print-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tui_agents import AGENTS, ROOT, Agent, Pitui, Scratch, ensure_pi, pi_version  # noqa: E402
from tui_server import ScriptedModelServer, fixed  # noqa: E402

REPLY = "zqprint Hello from the bench model."
WRAPPER = """
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.run(sys.argv[2:], capture_output=True, text=True, cwd=sys.argv[1],
                      stdin=subprocess.DEVNULL)
wall = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mib": usage.ru_maxrss / 1024, "rc": proc.returncode,
                  "out": proc.stdout[-400:], "err": proc.stderr[-1500:]}))
"""
TARGETS = {"wall": 1.0, "cpu": 1.0, "rss_mib": 1.2}


def one_run(agent: Agent, server: ScriptedModelServer) -> dict[str, Any]:
    scratch = Scratch.make()
    try:
        agent.setup(scratch, server.api_base)
        argv = [*agent.argv(server.api_base, scratch, None), "-p", "hi"]
        server.reset(fixed(REPLY))
        done = subprocess.run(
            [sys.executable, "-c", WRAPPER, str(scratch.project), *argv],
            env=agent.env(scratch),
            capture_output=True,
            text=True,
            timeout=300,
        )
        result: dict[str, Any] = json.loads(done.stdout)
        if result["rc"] != 0 or "zqprint" not in result["out"]:
            raise RuntimeError(
                f"{agent.name} -p failed (exit {result['rc']}): {result['err'] or result['out']}"
            )
        return result
    finally:
        server.reset(None)
        scratch.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "print-latest.json")
    args = parser.parse_args()
    ensure_pi()
    agents: list[Agent] = [Pitui(), AGENTS["pi"]()]
    samples: dict[str, list[dict[str, Any]]] = {a.name: [] for a in agents}
    with ScriptedModelServer() as server:
        for agent in agents:  # one unmeasured run each: npm/pyc caches, the server warm
            one_run(agent, server)
        for run in range(args.runs):
            order = agents if run % 2 == 0 else list(reversed(agents))
            for agent in order:
                result = one_run(agent, server)
                samples[agent.name].append(result)
                print(
                    f"  run {run + 1} {agent.name:5}: wall {result['wall'] * 1e3:7.0f} ms, "
                    f"CPU {result['cpu'] * 1e3:7.0f} ms, peak RSS {result['rss_mib']:6.1f} MiB",
                    flush=True,
                )
    rows = []
    print(f"\n`-p hi`, {args.runs} runs each ({pi_version()}; load {os.getloadavg()[0]:.1f})")
    for measure, unit, scale in (("wall", "ms", 1e3), ("cpu", "ms", 1e3), ("rss_mib", "MiB", 1)):
        mine = [s[measure] * scale for s in samples["pitui"]]
        theirs = [s[measure] * scale for s in samples["pi"]]
        ratio = statistics.median(mine) / statistics.median(theirs)
        verdict = "PASS" if ratio <= TARGETS[measure] else "FAIL"
        rows.append(
            {
                "measure": measure,
                "unit": unit,
                "pitui": statistics.median(mine),
                "pi": statistics.median(theirs),
                "ratio": ratio,
                "target": TARGETS[measure],
                "verdict": verdict,
            }
        )
        print(
            f"  {measure:8} pitui {statistics.median(mine):7.1f} {unit} "
            f"({min(mine):.1f}-{max(mine):.1f}), pi {statistics.median(theirs):7.1f} {unit} "
            f"({min(theirs):.1f}-{max(theirs):.1f}): {ratio:.2f}x "
            f"(target <= {TARGETS[measure]}x) {verdict}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "when": time.strftime("%Y-%m-%d %H:%M"),
                "machine": platform.platform(),
                "load": os.getloadavg(),
                "pi": pi_version(),
                "pitui_root": str(ROOT),
                "rows": rows,
                "samples": samples,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
