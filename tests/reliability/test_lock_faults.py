"""Taking the single-writer lock when the disk is full or the folder is not writable, and the
``.lock`` note of a dead holder. A session that cannot be locked is never written: it opens
read-only with one sentence saying why."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.screens import messages_shown, wait_for

from pitui.cli import main
from pitui.session import ReadOnlySessionError, SessionStore

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0190a6f2-0000-7000-8000-0000000000dd",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/proj",
}


def jline(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def session(path: Path) -> bytes:
    data = jline(HEADER) + jline(
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1},
        }
    )
    path.write_bytes(data)
    return data


def note(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@pytest.fixture
def disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write of file data fails with ENOSPC (creating an empty file still works)."""

    def full(*args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    monkeypatch.setattr(os, "write", full)


@pytest.fixture
def folder_not_writable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing new can be created next to the session (as in a read-only folder; as root a
    chmod would not stop us, so the refusal is simulated at ``os.open``)."""
    real_open = os.open

    def refuse(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and not os.path.exists(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)


# ---------------------------------------------------------------------------- item 5


def test_full_disk_at_open_gives_a_read_only_session_with_one_sentence(
    tmp_path: Path, disk_full: None
) -> None:
    path = tmp_path / "s.jsonl"
    original = session(path)
    store = SessionStore.open(path)
    assert store.read_only
    reason = store.read_only_reason
    assert reason is not None and "\n" not in reason and reason.endswith(".")
    assert reason.startswith(f"The disk holding {path} is full")
    with pytest.raises(ReadOnlySessionError):
        store.append_message({"role": "user", "content": "x", "timestamp": 2})
    assert [n.id for n in store.nodes()] == ["u1"]
    store.close()
    assert path.read_bytes() == original
    assert not note(path).exists()


def test_full_disk_at_open_in_print_mode_is_one_sentence_not_an_internal_error(
    tmp_path: Path, disk_full: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    original = session(path)
    argv = ["--session", str(path), "-p", "hi", "--model", "openai/test-model"]
    code = main([*argv, "--api-base", "http://127.0.0.1:9/v1"])
    _, err = capsys.readouterr()
    assert code == 2  # refused before the run: nothing could be saved
    assert "internal error" not in err and "Traceback" not in err
    assert err.count("\n") == 1 and f"The disk holding {path} is full" in err
    assert path.read_bytes() == original


async def test_full_disk_at_open_in_the_tui_is_a_notice(tmp_path: Path, disk_full: None) -> None:
    from pitui.config.settings import Settings
    from pitui.ui.app import PituiApp

    path = tmp_path / "s.jsonl"
    original = session(path)
    store = SessionStore.open(path)
    app = PituiApp(store, settings=Settings.from_dict({"ui": {"cursorBlink": False}}), cwd=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:

        def full() -> bool:
            return any(
                m.startswith(f"The disk holding {path} is full") for m in messages_shown(app)
            )

        await wait_for(pilot, full)
    assert path.read_bytes() == original


# ---------------------------------------------------------------------------- item 6


def test_a_folder_that_cannot_hold_a_lock_file_still_has_one_writer(
    tmp_path: Path, folder_not_writable: None
) -> None:
    path = tmp_path / "s.jsonl"
    original = session(path)
    first = SessionStore.open(path)
    assert not first.read_only, first.read_only_reason
    assert not note(path).exists()  # no note could be written ...
    second = SessionStore.open(path)
    assert second.read_only  # ... but the session file itself is locked
    assert second.read_only_reason is not None and "another pitui" in second.read_only_reason
    with pytest.raises(ReadOnlySessionError):
        second.append_message({"role": "user", "content": "second", "timestamp": 2})
    added = first.append_message({"role": "user", "content": "first", "timestamp": 2})
    second.close()
    first.close()
    data = path.read_bytes()
    assert data.startswith(original) and data.count(b"\n") == 3
    assert json.loads(data.splitlines()[-1])["id"] == added


def _holder(path: str, ready: Any, done: Any) -> None:  # pragma: no cover - forked child
    store = SessionStore.open(path)
    if store.read_only:
        os._exit(3)
    ready.set()
    for i in range(200):
        store.append_message({"role": "user", "content": f"holder {i}", "timestamp": i})
    done.wait(30)
    store.close()
    os._exit(0)


def test_two_processes_in_a_folder_without_a_lock_file_never_interleave(
    tmp_path: Path, folder_not_writable: None
) -> None:
    path = tmp_path / "s.jsonl"
    session(path)
    context = multiprocessing.get_context("fork")
    ready, done = context.Event(), context.Event()
    child = context.Process(target=_holder, args=(str(path), ready, done))
    child.start()
    assert ready.wait(30)
    second = SessionStore.open(path)
    assert second.read_only
    with pytest.raises(ReadOnlySessionError):
        second.append_message({"role": "user", "content": "interloper", "timestamp": 1})
    second.close()
    done.set()
    child.join(60)
    assert child.exitcode == 0
    lines = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert len(lines) == 2 + 200 and "interloper" not in json.dumps(lines)


# ---------------------------------------------------------------------------- item 11


_HOLDER = textwrap.dedent(
    """
    import sys
    from pitui.session import SessionStore
    store = SessionStore.open(sys.argv[1])
    print("writer" if not store.read_only else "read_only", flush=True)
    sys.stdin.readline()
    """
)


@pytest.fixture
def killed_holder(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.jsonl"
    session(path)
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writer"
    assert note(path).read_text().strip() == str(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    yield path


def test_a_dead_holders_lock_note_is_replaced_then_removed(killed_holder: Path) -> None:
    path = killed_holder
    store = SessionStore.open(path)
    assert not store.read_only
    assert note(path).read_text().strip() == str(os.getpid())
    store.close()
    assert not note(path).exists()


def test_a_dead_holders_lock_note_is_removed_even_when_ours_cannot_be_written(
    killed_holder: Path, disk_full: None
) -> None:
    path = killed_holder
    store = SessionStore.open(path)
    assert store.read_only and store.read_only_reason is not None
    assert "is full" in store.read_only_reason
    assert not note(path).exists()  # no note naming a dead process stays behind
    store.close()


def test_a_lock_note_that_is_a_symlink_is_never_followed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session(path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    note(path).symlink_to(victim)
    store = SessionStore.open(path)
    assert not store.read_only  # the session file is locked; the note is just not written
    store.close()
    assert victim.read_text() == "precious\n"
