"""Pure text helpers: JavaScript string measures and the terminal sanitizer (pitui.text)."""

from __future__ import annotations

import json
from typing import Any

from pitui.text import (
    StreamSanitizer,
    js_len,
    js_stringify,
    js_truncate,
    keep_sgr_only,
    one_line,
    strip_escapes,
    terminal_line,
    terminal_text,
)


def test_js_string_measures() -> None:
    assert js_len("a😀") == 3
    assert js_truncate("a😀b", 2) == "a" and js_truncate("a😀b", 3) == "a😀"
    assert js_stringify({"a": [1.0, 2.5, {"b": -0.0}], "c": "é"}) == '{"a":[1,2.5,{"b":0}],"c":"é"}'
    assert js_stringify(None) == "null" and js_stringify(1e21) == "1e+21"


def test_js_stringify_any_depth_without_recursion() -> None:
    deep: dict[str, Any] = {}
    cur = deep
    for _ in range(500):
        cur["a"] = {"n": 1.0}
        cur = cur["a"]
    out = js_stringify(deep)
    assert out.startswith('{"a":{"n":1,"a":') or out.startswith('{"a":{"n":1')
    assert json.loads(out) == json.loads(json.dumps(deep).replace("1.0", "1"))
    very: list[Any] = []
    node = very
    for _ in range(100_000):
        node.append([])
        node = node[0]
    assert js_stringify(very) == "[" * 100_001 + "]" * 100_001  # whole, at any depth


def test_sanitizers() -> None:
    hostile = "a\x1b]0;T\x07b\x1b[2Jc\x9bd\u202ee\u2028f\x07\x08g\x1b[31mred\x1b[0m\tt"
    assert strip_escapes(hostile) == "abcde\nfgred\tt"
    assert keep_sgr_only(hostile) == "abcde\nfg\x1b[31mred\x1b[0m\tt"
    assert terminal_text(hostile) == "abcde\nfgred\tt"
    assert terminal_line("a\nb\tc") == "a b c"
    assert terminal_text("plain text") == "plain text"
    assert strip_escapes("progress 10%\rprogress 99%\r\nnext") == "progress 99%\nnext"


def test_one_line_is_short_safe_and_says_it_was_cut() -> None:
    hostile = "  fix\x1b]0;pwned\x07 the\n\n  bug\tnow\x1b[2J  "
    assert one_line(hostile) == "fix the bug now"
    assert one_line("a" * 10, 4) == "aaa…" and len(one_line("b" * 50, 20)) == 20
    assert one_line("exactly four", 12) == "exactly four"
    assert terminal_line("keep  its  spacing") == "keep  its  spacing"  # paths and names
    # For JSON (data, exact): only the whitespace is folded, escapes are left for the reader.
    assert one_line("a\x1b[31m\nb", keep_escapes=True) == "a\x1b[31m b"


def test_stream_sanitizer_holds_a_split_sequence() -> None:
    sanitizer = StreamSanitizer()
    assert sanitizer.feed("ok \x1b]0;ti") == "ok "
    assert sanitizer.feed("tle\x07 go") == " go"
    assert sanitizer.feed("\x1b[") == ""
    assert sanitizer.feed("31mred") == "red"
    assert sanitizer.flush() == ""
