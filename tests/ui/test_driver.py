"""The terminal driver's input thread stops the moment input is disabled (quitting restores
the terminal without waiting for its poll), after delivering what was typed."""

from __future__ import annotations

import os
import pty
import signal
import threading
import time
import tty
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App

from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.textual_patches.driver import PituiDriver


@pytest.fixture
async def driver(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[PituiDriver, int]]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT, signal.SIGWINCH)}
    master, slave = pty.openpty()
    tty.setraw(slave)  # as the app puts its terminal: each byte is readable at once
    # Without the wake-up, the input thread would sleep an hour before it saw the stop.
    monkeypatch.setattr(PituiDriver, "POLL", 3600.0)
    made = PituiDriver(App(), mouse=False)
    made.fileno = slave
    try:
        yield made, master
    finally:
        made.close()
        os.close(master)
        os.close(slave)
        for number, handler in saved.items():
            signal.signal(number, handler)


def type_and_stop(made: PituiDriver, master: int, data: bytes, key: str) -> None:
    """Run the input thread, write ``data`` to the terminal, wait for ``key`` to arrive, then
    stop input: it returns only once the thread has stopped."""
    received: list[Any] = []
    made.process_message = received.append  # type: ignore[method-assign]
    thread = threading.Thread(target=made.run_input_thread, name="test-input")
    made._key_thread = thread
    thread.start()
    os.write(master, data)
    deadline = time.monotonic() + 20
    while not any(isinstance(e, events.Key) and e.key == key for e in received):
        assert time.monotonic() < deadline, f"{key} never arrived: {received}"
        time.sleep(0.01)
    made.disable_input()  # joins the thread
    assert not thread.is_alive()


@pytest.mark.timeout(60)
async def test_the_input_thread_delivers_keys_and_stops_at_once(
    driver: tuple[PituiDriver, int],
) -> None:
    type_and_stop(*driver, b"q", "q")


@pytest.mark.timeout(60)
async def test_a_lone_esc_arrives_at_once(
    driver: tuple[PituiDriver, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Esc is reported on the read that brought it: with the input poll at an hour, Textual's
    wait for a sequence that might follow would hold it for that hour."""
    from textual.drivers import linux_driver

    from pitui.ui.textual_patches.keys import answer_lone_escape

    monkeypatch.delenv("ESCDELAY", raising=False)
    monkeypatch.setattr(linux_driver, "XTermParser", linux_driver.XTermParser)  # restored after
    answer_lone_escape()
    type_and_stop(*driver, b"\x1b", "escape")


def test_the_app_uses_it_unless_textual_driver_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    app = PituiApp(SessionStore.in_memory(str(tmp_path)), cwd=tmp_path)
    assert app.driver_class is PituiDriver
