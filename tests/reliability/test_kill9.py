"""Kill -9 at random moments while a process appends: nothing acknowledged is ever lost, the
file always opens, and the next append gives a valid file.

Children are forked from the test process (no interpreter start-up per round), so the 200 rounds
take seconds; each child opens the session itself, as a new pitui process would.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from pitui.session import SessionStore

KILLS = 200


def _child(path: Path, seed: int, ack_fd: int) -> None:  # pragma: no cover - runs in a fork
    rng = random.Random(seed)
    store = (
        SessionStore.open(path) if path.exists() else SessionStore.create_at(path, str(path.parent))
    )
    os.write(ack_fd, b"ready\n")
    n = 0
    limit = rng.randint(50, 400)  # bounded, so the file stays a realistic size over 200 rounds
    while True:
        n += 1
        if n > limit:
            time.sleep(60)  # wait for the kill
            continue
        kind = rng.random()
        if kind < 0.4:
            message = {
                "role": "user",
                "content": [{"type": "text", "text": f"u{n} " * 20}],
                "timestamp": n,
            }
            entry_id = store.append_message(message)
        elif kind < 0.7:
            entry_id = store.append_message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"a{n}"},
                        {
                            "type": "toolCall",
                            "id": f"c{n}",
                            "name": "read",
                            "arguments": {"path": "x"},
                        },
                    ],
                    "api": "litellm",
                    "provider": "openai",
                    "model": "m",
                    "usage": {
                        "input": n,
                        "output": 1,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": n + 1,
                    },
                    "stopReason": "toolUse",
                    "timestamp": n,
                }
            )
        elif kind < 0.95:
            size = 50_000 if rng.random() < 0.1 else 200
            entry_id = store.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": f"c{n}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "x" * size}],
                    "isError": False,
                    "timestamp": n,
                }
            )
        else:
            entry_id = store.append_compaction(f"summary {n}", store.leaf_id, n)
        os.write(ack_fd, f"+{entry_id}\n".encode())


def _run_round(path: Path, seed: int, wait: float) -> list[str]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(read_fd)
        try:
            _child(path, seed, write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    buffer = b""
    while b"ready\n" not in buffer:
        chunk = os.read(read_fd, 65536)
        assert chunk, "the child died before it was ready"
        buffer += chunk
    time.sleep(wait)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    while chunk := os.read(read_fd, 65536):
        buffer += chunk
    os.close(read_fd)
    return [line[1:].decode() for line in buffer.split(b"\n") if line.startswith(b"+")]


def complete_line_ids(path: Path) -> set[str]:
    """Ids of every complete (newline-terminated) entry line in the file."""
    lines = path.read_bytes().split(b"\n")[:-1]
    ids = set()
    for raw in lines[1:]:
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            ids.add(obj["id"])
    return ids


@pytest.mark.timeout(300)
def test_kill_nine_loop_never_loses_acknowledged_entries(tmp_path: Path) -> None:
    rng = random.Random(1234)
    path = tmp_path / "session.jsonl"
    acknowledged: list[str] = []
    for round_no in range(KILLS):
        acknowledged += _run_round(path, round_no, rng.uniform(0.0, 0.006))
        if not path.exists():
            continue  # killed before its first user message: nothing was written yet
        store = SessionStore.open(path, read_only=True)
        known = {n.id for n in store.nodes()}
        missing = [i for i in acknowledged if i not in known]
        assert not missing, f"round {round_no}: lost {missing[:5]}"
        assert complete_line_ids(path) <= known | {n.id for n in store.nodes()} | {"pitui.leaf"}
        store.close()
    assert len(acknowledged) > KILLS, "the children must really append between kills"
    store = SessionStore.open(path)
    store.append_message({"role": "user", "content": "after the storm", "timestamp": 1})
    count = len(store)
    store.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    for raw in lines[:-1]:
        json.loads(raw)  # every line is one complete JSON object, as pi's loader needs
    reopened = SessionStore.open(path, read_only=True)
    assert len(reopened) == count and not reopened.warnings


def test_torn_tail_after_a_crash_is_set_aside(tmp_path: Path) -> None:
    """A crash in the middle of a large write leaves a torn line; it goes to a side file."""
    path = tmp_path / "s.jsonl"
    store = SessionStore.create_at(path, str(tmp_path))
    store.append_message({"role": "user", "content": "kept", "timestamp": 1})
    store.close()
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"torn","parentId":null,"timestamp":"2026-')
    store = SessionStore.open(path)
    assert [n.id for n in store.nodes()][-1] != "torn"
    store.append_message({"role": "user", "content": "next", "timestamp": 2})
    store.close()
    [side] = tmp_path.glob("s.jsonl.torn-*")
    assert side.read_bytes().startswith(b'{"type":"message","id":"torn"')
    for raw in path.read_bytes().split(b"\n")[:-1]:
        json.loads(raw)
