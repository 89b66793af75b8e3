"""A lone Esc is reported at once, not after Textual's wait for an escape sequence."""

from __future__ import annotations

import pytest
from textual._xterm_parser import XTermParser
from textual.drivers import linux_driver

from pitui.ui.textual_patches.keys import answer_lone_escape, lone_escape_parser


def keys(parser: XTermParser, data: str) -> list[str]:
    """The keys a read of ``data`` gives, with the driver's tick that follows every read."""
    events = [*parser.feed(data), *parser.tick()]
    return [event.key for event in events if hasattr(event, "key")]


def test_a_read_of_only_esc_is_the_esc_key_at_once() -> None:
    parser = lone_escape_parser(XTermParser)(False)
    assert keys(parser, "\x1b") == ["escape"]
    assert keys(parser, "\x1b") == ["escape"]  # and the next one
    # Textual's own parser is still waiting for what may follow the ESC.
    assert keys(XTermParser(False), "\x1b") == []


def test_sequences_and_other_keys_are_read_as_before() -> None:
    for data in ("\x1b[A", "\x1b[1;5C", "a", "\x1b[A\x1b[B", "é"):
        assert keys(lone_escape_parser(XTermParser)(False), data) == keys(
            XTermParser(False), data
        ), data
    assert keys(lone_escape_parser(XTermParser)(False), "\x1b[A") == ["up"]


def test_the_terminal_driver_gets_it_unless_escdelay_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(linux_driver, "XTermParser", XTermParser)
    answer_lone_escape({"ESCDELAY": "100"})  # the user's own wait is kept
    assert linux_driver.XTermParser is XTermParser
    answer_lone_escape({})
    installed = linux_driver.XTermParser
    assert installed is not XTermParser
    assert keys(installed(False), "\x1b") == ["escape"]
    answer_lone_escape({})  # idempotent
    assert linux_driver.XTermParser is installed
