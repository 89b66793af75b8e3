"""The terminal driver: Textual's Linux driver, whose input thread stops the moment it is told.

A subclass of ``textual.drivers.linux_driver.LinuxDriver`` whose input loop
(:meth:`PituiDriver.run_input_thread`) is Textual's own rewritten, and which reads the driver's
private ``_app``, ``_debug`` and ``_key_thread``.

Textual's input thread waits for stdin in steps of 0.1 s and, once told to stop, waits another
0.1 s on an empty selector; restoring the terminal joins that thread, so every quit (and every
suspend) waited 0.1-0.2 s on a blank screen. Here the thread also watches a pipe that stopping
writes to: it wakes at once, and the terminal is handed back without the wait.

A read of plain text with a line break inside it is a paste the terminal did not bracket
(:class:`pitui.ui.keys.UnbracketedPaste`): it arrives as one paste, not one prompt per line.

Once the terminal is restored the app is told (:meth:`stop_application_mode`): after a clean
quit the process ends there.

Each input event also tells a background import of litellm (for a provider outside the four
native APIs) to make way for the frame it causes (:func:`pitui.llm.lazy.make_way`): a key
typed, or a prompt sent, while it imports is drawn without waiting for its share of the
interpreter.
"""

from __future__ import annotations

import contextlib
import os
import selectors
from codecs import getincrementaldecoder
from typing import Any

from textual import events
from textual._parser import ParseError
from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from pitui.llm.lazy import make_way
from pitui.ui.keys import UnbracketedPaste
from pitui.ui.textual_patches.keys import waiting_for_sequence

READ_SIZE = 4096


class PituiDriver(LinuxDriver):
    POLL = 0.1
    """Seconds between two looks at the stop flag while no input comes (Textual's value)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A pipe (read end, write end) the input thread watches besides stdin: a byte on it
        # means "stop now". It lives as long as the driver (closed by close(), after the input
        # thread was joined), so no byte ever reaches a recycled descriptor.
        self._wake: tuple[int, int] | None = os.pipe()
        os.set_blocking(self._wake[0], False)

    def disable_input(self) -> None:
        wake = self._wake
        if wake is not None and not self.exit_event.is_set():
            with contextlib.suppress(OSError):
                os.write(wake[1], b"\0")
        super().disable_input()  # sets exit_event, joins the input thread

    def close(self) -> None:
        super().close()
        wake, self._wake = self._wake, None
        thread = self._key_thread
        if wake is not None and (thread is None or not thread.is_alive()):
            for fd in wake:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def stop_application_mode(self) -> None:
        """Textual's, then the app is told the terminal is back (a clean quit ends there:
        :meth:`pitui.ui.app.PituiApp.terminal_restored`)."""
        super().stop_application_mode()
        restored = getattr(self._app, "terminal_restored", None)
        if callable(restored):
            restored()

    def process_message(self, message: Message) -> None:
        make_way()
        super().process_message(message)

    def run_input_thread(self) -> None:
        """Read stdin and dispatch events until told to stop (Textual's loop, plus the wake
        pipe)."""
        wake = self._wake
        selector = selectors.DefaultSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        if wake is not None:
            _drain(wake[0])  # a wake-up left from the last stop (a suspend)
            selector.register(wake[0], selectors.EVENT_READ)
        # Looked up now: keys.answer_lone_escape may have put its parser there.
        parser = linux_driver.XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        pastes = UnbracketedPaste()
        try:
            while not self.exit_event.is_set():
                for key, _ in selector.select(self.POLL):
                    if key.fd != self.fileno:
                        # Stopping is under way: exit_event is set right after the wake-up.
                        self.exit_event.wait(self.POLL)
                        continue
                    data = decode(os.read(self.fileno, READ_SIZE))
                    if not data:
                        continue  # stdin is not a terminal (piped): nothing to parse
                    # (A parser that waits for the rest of an escape sequence has a deadline.)
                    pasted = pastes.text(data, mid_sequence=waiting_for_sequence(parser))
                    if pasted is not None:
                        self.process_message(events.Paste(pasted))
                        continue
                    for event in parser.feed(data):
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
        finally:
            selector.close()
            with contextlib.suppress(EOFError, ParseError):
                for _ in parser.feed(""):
                    pass


def _drain(fd: int) -> None:
    """Read what waits on the (non-blocking) pipe ``fd``."""
    with contextlib.suppress(OSError):
        while os.read(fd, READ_SIZE):
            pass
