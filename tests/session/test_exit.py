"""A script that opens a long session with ``pitui.session`` and simply exits must exit
cleanly: the nodes' parent links form a chain as long as the branch, and freeing it from the
leaf at interpreter exit used to recurse once per entry and overflow the C stack (SIGSEGV)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAIN = 30_000  # with a 1 MB stack, enough to overflow it without the fix (200k with 8 MB)

SCRIPT = """
import sys
from pitui.session import SessionStore

store = SessionStore.open(sys.argv[1], read_only=sys.argv[2] == "read-only")
print(len(store.path_to()), flush=True)
if sys.argv[3] == "close":
    store.close()
"""


def chain_session(path: Path, entries: int) -> Path:
    stamp = "2026-01-15T09:40:00.000Z"
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": stamp, "cwd": "/tmp"}]
    parent = None
    for i in range(entries):
        entry_id = f"{i:08x}"
        message = {"role": "user", "content": [{"type": "text", "text": f"q{i}"}], "timestamp": 1}
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": stamp,
                "message": message,
            }
        )
        parent = entry_id
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def small_stack() -> None:
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return chain_session(tmp_path_factory.mktemp("exit") / "chain.jsonl", CHAIN)


@pytest.mark.parametrize("how", ["read-only open", "writable, closed"])
def test_exit_with_a_long_session_still_open_is_clean(long_session: Path, how: str) -> None:
    mode, end = ("read-only", "open") if how == "read-only open" else ("write", "close")
    child = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", SCRIPT, str(long_session), mode, end],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=small_stack,
        stdin=subprocess.DEVNULL,
    )
    assert child.returncode == 0, (child.returncode, child.stderr[-2000:])
    assert child.stdout.strip() == str(CHAIN)
    assert child.stderr == ""
