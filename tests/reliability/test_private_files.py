"""Every file pitui writes for the user is 0600 and every folder it makes 0700, whatever the
umask: sessions, locks, exports, logs, the internal-error log, saved bash outputs, the trust
list, ``.bak`` and ``.torn-*`` files. The test runs each writer under umask 022 and lists what
appeared."""

from __future__ import annotations

import logging
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitui.agent.tools import OutputWindow
from pitui.cli import main, print_mode
from pitui.config import logs, trust
from pitui.export import export_html, export_jsonl
from pitui.session import SessionStore
from pitui.session.writer import rewrite_atomically


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def listing(root: Path) -> dict[str, str]:
    """Every path under ``root`` with its permission bits, ``"d0700"`` / ``"f0600"``."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            kind = "d" if stat.S_ISDIR(info.st_mode) else "f"
            found[str(path.relative_to(root))] = f"{kind}{stat.S_IMODE(info.st_mode):04o}"
    return found


def test_everything_pitui_writes_is_private(
    tmp_path: Path, umask022: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))

    # A session (its folders, the file, the lock), then exports into new nested folders.
    store = SessionStore.create(home / "sessions" / "project", str(tmp_path))
    store.append_message({"role": "user", "content": "hello", "timestamp": 1})
    export_html(store, home / "exports" / "html" / "s.html")
    export_jsonl(store, home / "exports" / "jsonl" / "s.jsonl")
    assert store.path is not None
    session_file = store.path
    store.close()

    # A session backup (.bak) of a file pi wrote world-readable.
    legacy = home / "legacy.jsonl"
    legacy.write_text('{"type":"session"}\n')
    legacy.chmod(0o644)
    os.close(rewrite_atomically(legacy, b'{"type":"session","version":3}\n'))

    # A torn tail set aside (.torn-*), in a session file pi wrote world-readable.
    torn = home / "torn.jsonl"
    stamp = "2025-01-01T00:00:00.000Z"
    header = f'{{"type":"session","version":3,"id":"t","timestamp":"{stamp}","cwd":"{tmp_path}"}}\n'
    torn.write_text(header + '{"type":"message","id":"b","par')
    torn.chmod(0o644)
    torn_store = SessionStore.open(torn)
    torn_store.append_message({"role": "user", "content": "after", "timestamp": 2})
    torn_store.close()

    # The log file (and a rotation), the internal-error log, the trust list.
    log_path = logs.configure_logging(home / "state" / "pitui" / "logs" / "pitui.log")
    logging.getLogger("pitui.test").warning("a warning")
    handler = logging.getLogger().handlers[-1]
    assert isinstance(handler, logs.PrivateRotatingFileHandler)
    handler.doRollover()
    logging.getLogger("pitui.test").warning("after the rollover")
    handler.close()

    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("an internal error")

    monkeypatch.setattr(print_mode, "run_print", broken)
    monkeypatch.setattr(sys, "stdin", None)
    assert main(["-p", "x"]) == 1
    trust.trust(tmp_path)

    # A saved bash output in a new nested folder.
    window = OutputWindow(home / "outputs" / "run", max_lines=2, max_bytes=10)
    window.feed(b"line\n" * 10)
    window.close()
    assert window.full_output_path is not None

    found = listing(home)
    seen_files = {path for path, mode in found.items() if mode.startswith("f")}
    for path, mode in found.items():
        if path in ("legacy.jsonl", "torn.jsonl"):
            continue  # files pi wrote keep their mode
        expected = "f0600" if path in seen_files else "d0700"
        assert mode == expected, f"{path} is {mode}"
    names = sorted(found)
    relative = str(session_file.relative_to(home))
    for wanted in (
        relative,
        "exports/html/s.html",
        "exports/jsonl/s.jsonl",
        "legacy.jsonl.bak",
        "state/pitui/logs/pitui.log",
        "state/pitui/logs/pitui.log.1",
        str(log_path.relative_to(home)),
        str(trust.trust_file().relative_to(home)),
        str(window.full_output_path.relative_to(home)),
    ):
        assert wanted in names, f"{wanted} missing from {names}"
    assert any(name.startswith("torn.jsonl.torn-") for name in names), names
    assert any(name.endswith("pitui.log") and "logs" not in name for name in names), names
