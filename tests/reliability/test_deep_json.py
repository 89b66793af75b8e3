"""JSON nested ~1,000 levels deep (what orjson still reads from a session line) and long chains
of hidden entries: every path that walks them is iterative or bounded, never a RecursionError.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from corpus import CASES, nested
from hypothesis import given
from hypothesis import strategies as st

from pitui.cli import main
from pitui.deepjson import clip, depth_exceeds, dumps
from pitui.session import SessionStore
from pitui.session.codec import dumps_line, dumps_pretty
from pitui.text import js_stringify

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


@given(value=json_values, indent=st.sampled_from([None, 0, 2]), ascii_only=st.booleans())
def test_the_iterative_encoder_writes_exactly_what_json_dumps_writes(
    value: Any, indent: int | None, ascii_only: bool
) -> None:
    from pitui.deepjson import _encode

    for separators in (None, (",", ":")):
        assert _encode(value, indent, ascii_only, separators, None) == json.dumps(
            value, indent=indent, ensure_ascii=ascii_only, separators=separators
        )


def test_dumps_at_any_depth() -> None:
    value = nested(5_000)  # 10,000 levels
    text = dumps(value, separators=(",", ":"))
    assert text.startswith('{"x":[{"x":[{') and text.endswith("}]}]}")
    assert text.count("[") == 5_000
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)
    try:
        assert json.loads(text) == value
    finally:
        sys.setrecursionlimit(old)
    pretty = dumps_pretty(value)
    assert pretty.splitlines()[1] == '  "x": ['
    assert dumps_line(value) == text.encode() + b"\n"
    assert js_stringify(value) == text


def test_depth_probe_and_clip_are_bounded() -> None:
    value = nested(5_000)
    assert depth_exceeds(value, 50) and not depth_exceeds({"a": [1, {"b": 2}]}, 3)
    clipped = clip(value, 4)
    assert clipped == {"x": [{"x": ["…"]}]}  # four levels kept, the fifth is the marker
    assert clip([1, [2, [3]]], 2) == [1, [2, "…"]]


def test_a_long_chain_of_hidden_markers_is_walked_without_recursion(tmp_path: Path) -> None:
    path = tmp_path / "markers.jsonl"
    path.write_bytes(CASES["hidden_marker_chain"]())
    store = SessionStore.open(path, read_only=True)
    assert [n.id for n in store.children("root")] == ["after"]
    assert store.tree() == {"null": ["root"], "root": ["after"]}
    assert [n.id for n in store.path_to()] == ["root", "after"]
    store.close()


def test_a_v2_entry_without_an_id_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    path.write_bytes(CASES["v2_entry_without_id"]())
    store = SessionStore.open(path, read_only=True)
    assert [n.id for n in store.nodes()] == ["a", "b"]
    assert [(w.line, w.message) for w in store.warnings] == [
        (3, "valid JSON but not a session entry (no id), skipped"),
        (4, "valid JSON but not a session entry (no id), skipped"),
    ]
    assert store.project().messages[-1]["content"][0]["text"] == "after the id-less ones"
    store.close()


@pytest.mark.parametrize("command", ["context", "tree"])
@pytest.mark.parametrize("as_json", [False, True])
def test_cli_prints_deep_tool_arguments_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, as_json: bool
) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(CASES["deep_tool_arguments"]())
    code = main([command, str(path), *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    if as_json and command == "context":
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(20_000)
        try:
            printed = json.loads(out)
            call = printed["messages"][1]["content"][1]
            assert call["arguments"] == nested(500)
        finally:
            sys.setrecursionlimit(old)
