"""Session files for the TUI benchmarks (all under benchmarks/.data, gitignored, cached).

* ``session-<size>-s1.jsonl``: ``generate.py``'s seeded sessions (the same files ``run.py``
  uses), 2k to 1M entries.
* ``tui-<size>.jsonl``: the same plus one final prompt and a one-line answer, so that "the
  latest prompt is on screen" has one unambiguous marker (``latest_marker(size)``) right
  above the editor in both agents.
* ``pi-real.jsonl``: a session written by pi 1.6 itself (``make_pi_session``): scripted
  ``pi -p`` runs against the scripted model, with real tool calls (read, bash, write, edit)
  executed by pi in a scratch project, until the file is ~2.5 MB.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / ".data"
SEED = 1
SIZES = {"2k": 2_000, "20k": 20_000, "200k": 200_000, "1m": 1_000_000}
PROJECT = DATA_DIR / "project"
"""The working directory of every benchmark run (stable, so the session headers can name it:
pi asks what to do when a session's cwd does not exist)."""


def ensure_project() -> Path:
    PROJECT.mkdir(parents=True, exist_ok=True)
    (PROJECT / "notes.txt").write_text("bench notes\n" * 4)
    return PROJECT


def base_file(size: str) -> Path:
    return DATA_DIR / f"session-{size}-s{SEED}.jsonl"


def bench_file(size: str) -> Path:
    return DATA_DIR / f"tui-{size}.jsonl"


def latest_marker(size: str) -> str:
    return f"Latest bench prompt {size} zqlatest"


def ensure_base(size: str) -> Path:
    path = base_file(size)
    if path.exists():
        return path
    sys.path.insert(0, str(HERE))
    from generate import generate  # a sibling script

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    print(
        f"generating {path.name} ({SIZES[size]:,} entries, seed {SEED}; 1M takes ~2 min) ...",
        flush=True,
    )
    generate(SIZES[size], SEED, path)
    return path


def _last_id(path: Path) -> str:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        f.seek(max(0, end - (1 << 20)))
        tail = f.read().splitlines()
    for line in reversed(tail):
        if line.strip():
            entry = json.loads(line)
            if "id" in entry and entry.get("type") != "session":
                return str(entry["id"])
    raise ValueError(f"{path}: no entry with an id at the end")


def _iso(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    )


def ensure_bench(size: str) -> Path:
    """``tui-<size>.jsonl``: the generated session plus the marker prompt and its answer."""
    out = bench_file(size)
    base = ensure_base(size)
    if out.exists() and out.stat().st_mtime >= base.stat().st_mtime:
        return out
    tmp = out.with_suffix(".tmp")
    shutil.copyfile(base, tmp)
    parent = _last_id(base)
    ms = 1_800_000_000_000
    rng = random.Random(size)
    user_id, reply_id = (f"{rng.getrandbits(32):08x}" for _ in range(2))
    user = {
        "type": "message",
        "id": user_id,
        "parentId": parent,
        "timestamp": _iso(ms),
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": latest_marker(size)}],
            "timestamp": ms,
        },
    }
    reply = {
        "type": "message",
        "id": reply_id,
        "parentId": user_id,
        "timestamp": _iso(ms + 900),
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Noted."}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {
                "input": 900,
                "output": 3,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 903,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": ms + 900,
        },
    }
    with tmp.open("ab") as f:
        f.write((json.dumps(user, separators=(",", ":")) + "\n").encode())
        f.write((json.dumps(reply, separators=(",", ":")) + "\n").encode())
    tmp.replace(out)
    return out


def copy_for_run(src: Path, folder: Path) -> Path:
    """A private copy (agents append to, migrate or lock the file they open) whose header
    names :data:`PROJECT` as its working directory."""
    dest = folder / src.name
    with src.open("rb") as fin, dest.open("wb") as fout:
        header = json.loads(fin.readline())
        header["cwd"] = str(ensure_project())
        fout.write((json.dumps(header, separators=(",", ":")) + "\n").encode())
        shutil.copyfileobj(fin, fout, 1 << 22)
    return dest


# ------------------------------------------------------------------------- pi-written file

PI_REAL = DATA_DIR / "pi-real.jsonl"
PI_REAL_TARGET = 2_500_000
PI_REAL_MARKER = "Latest bench prompt real zqlatest"

_FILE_WORDS = (
    "session",
    "tree",
    "render",
    "cache",
    "parser",
    "stream",
    "editor",
    "frame",
    "index",
    "worker",
    "status",
    "layout",
    "buffer",
    "cursor",
    "budget",
)


def _project_files(folder: Path, rng: random.Random) -> list[str]:
    names = []
    for i in range(24):
        name = f"src/mod_{rng.choice(_FILE_WORDS)}_{i}.py"
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for j in range(rng.randint(40, 160)):
            a, b = rng.choice(_FILE_WORDS), rng.choice(_FILE_WORDS)
            lines.append(f"def {a}_{j}(value):\n    return value.{b}({j})  # {a} {b}\n")
        path.write_text("".join(lines))
        names.append(name)
    return names


def make_pi_session(force: bool = False) -> Path:
    """Drive pi 1.6 (print mode) against the scripted model until its session file is ~2.5
    MB: prompts, each answered by several tool calls pi really executes, with Markdown text.
    Ends with the marker prompt so both agents show it on their first frame."""
    if PI_REAL.exists() and not force:
        return PI_REAL
    from tui_agents import Pi, Scratch, ensure_pi
    from tui_server import Reply, ScriptedModelServer, last_user_text, markdown_reply

    ensure_pi()
    rng = random.Random(11)
    scratch = Scratch.make()
    work = scratch.root / "work"  # pi's project: files it reads, greps and edits
    files = _project_files(work, rng)
    pi = Pi()
    server = ScriptedModelServer().start()
    pi.setup(scratch, server.api_base)
    plans: dict[str, list[tuple[str, dict[str, Any]]]] = {}

    def plan_for(prompt: str) -> list[tuple[str, dict[str, Any]]]:
        if prompt not in plans:
            steps: list[tuple[str, dict[str, Any]]] = []
            for _ in range(rng.randint(3, 9)):
                kind = rng.random()
                name = rng.choice(files)
                if kind < 0.45:
                    steps.append(("read", {"path": name}))
                elif kind < 0.75:
                    steps.append(
                        (
                            "bash",
                            {
                                "command": rng.choice(
                                    [
                                        f"grep -n def {name} | head -40",
                                        "ls -la src | head -30",
                                        f"wc -l {name}",
                                        f"sed -n 1,60p {name}",
                                        "cat src/*.py | head -120",
                                    ]
                                )
                            },
                        )
                    )
                elif kind < 0.9:
                    lines = [
                        x for x in (work / name).read_text().splitlines() if x.startswith("def ")
                    ]
                    line = rng.choice(lines)
                    steps.append(
                        (
                            "edit",
                            {
                                "path": name,
                                "edits": [{"oldText": line, "newText": line + "  # checked"}],
                            },
                        )
                    )
                else:
                    steps.append(
                        (
                            "write",
                            {
                                "path": f"notes/n{rng.randint(1, 99)}.md",
                                "content": markdown_reply(
                                    target_bytes=1500, seed=rng.randint(1, 9999)
                                ),
                            },
                        )
                    )
            plans[prompt] = steps
        return plans[prompt]

    def scenario(body: dict[str, Any]) -> Reply:
        prompt = last_user_text(body)
        if "zqprompt" not in prompt and "zqlatest" not in prompt:
            # a compaction or summary request: a structured summary
            return Reply.text(markdown_reply(target_bytes=3000, seed=rng.randint(1, 9999)))
        if "zqlatest" in prompt:
            return Reply.text("Noted.")
        steps = plan_for(prompt)
        done = 0
        for message in reversed(body.get("messages", [])):
            if message.get("role") == "user":
                break
            if message.get("role") == "tool":
                done += 1
        if done < len(steps):
            return Reply(
                tool_calls=[steps[done]],
                pieces=[f"Step {done + 1}: checking `{steps[done][1].get('path', 'src')}`."],
            )
        return Reply.text(
            markdown_reply(target_bytes=rng.randint(800, 4000), seed=rng.randint(1, 9999))
        )

    server.reset(scenario)
    env = pi.env(scratch)
    started = time.monotonic()
    session_file: Path | None = None
    prompt_no = 0
    try:
        while True:
            prompt_no += 1
            text = (
                f"zqprompt {prompt_no}: look at {rng.choice(files)} and "
                f"{' '.join(rng.choices(_FILE_WORDS, k=8))}"
            )
            args = [str(a) for a in pi.argv(server.api_base, scratch, session_file)]
            proc = subprocess.run(
                [*args, "-p", text], cwd=work, env=env, capture_output=True, text=True, timeout=300
            )
            if proc.returncode != 0:
                raise RuntimeError(f"pi -p failed ({proc.returncode}): {proc.stderr[-2000:]}")
            if session_file is None:
                found = sorted(scratch.sessions.rglob("*.jsonl"))
                if not found:
                    raise RuntimeError("pi wrote no session file")
                session_file = found[0]
            size = session_file.stat().st_size
            if prompt_no % 10 == 0:
                print(f"  pi session: {prompt_no} prompts, {size / 1e6:.2f} MB", flush=True)
            if size >= PI_REAL_TARGET:
                break
        args = [str(a) for a in pi.argv(server.api_base, scratch, session_file)]
        subprocess.run(
            [*args, "-p", PI_REAL_MARKER],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(session_file, PI_REAL.with_suffix(".tmp"))
        PI_REAL.with_suffix(".tmp").replace(PI_REAL)
    finally:
        server.stop()
        scratch.cleanup()
    print(
        f"  wrote {PI_REAL} ({PI_REAL.stat().st_size / 1e6:.2f} MB, {prompt_no + 1} prompts, "
        f"{time.monotonic() - started:.0f} s)",
        flush=True,
    )
    return PI_REAL


if __name__ == "__main__":
    for s in sys.argv[1:] or ["2k", "20k"]:
        if s == "real":
            print(make_pi_session(force=True))
        else:
            print(ensure_bench(s))
