"""The write and edit tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pitui.agent.tools import EditTool, ToolContext, ToolError, ToolResult, WriteTool, execute
from pitui.agent.tools.edit import apply_edits


async def write(ctx: ToolContext, **args: Any) -> ToolResult:
    return await execute(WriteTool(), args, ctx)


async def edit(ctx: ToolContext, path: str, *pairs: tuple[str, str]) -> ToolResult:
    edits = [{"oldText": old, "newText": new} for old, new in pairs]
    return await execute(EditTool(), {"path": path, "edits": edits}, ctx)


# --------------------------------------------------------------------------------------------
# write
# --------------------------------------------------------------------------------------------


async def test_write_creates_nested_folders(ctx: ToolContext) -> None:
    result = await write(ctx, path="a/b/c/new.py", content="print('hi')\n")
    target = ctx.cwd / "a" / "b" / "c" / "new.py"
    assert not result.is_error
    assert result.text == f"Successfully wrote 12 bytes to {target}"
    assert result.details == {"path": str(target), "bytes": 12}
    assert target.read_text() == "print('hi')\n"


async def test_write_counts_utf8_bytes_and_overwrites(ctx: ToolContext) -> None:
    target = ctx.cwd / "u.txt"
    target.write_text("old content that is longer")
    result = await write(ctx, path="u.txt", content="héllo ✓")
    assert result.text == f"Successfully wrote 10 bytes to {target}"
    assert target.read_bytes() == "héllo ✓".encode()


async def test_write_empty_content(ctx: ToolContext) -> None:
    result = await write(ctx, path="empty", content="")
    assert result.text.startswith("Successfully wrote 0 bytes to ")
    assert (ctx.cwd / "empty").read_bytes() == b""


async def test_write_to_a_directory_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "d").mkdir()
    result = await write(ctx, path="d", content="x")
    assert result.is_error
    assert "is a directory" in result.text


async def test_write_under_a_file_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "f").write_text("x")
    result = await write(ctx, path="f/child.txt", content="x")
    assert result.is_error
    assert "Could not" in result.text


async def test_write_requires_content(ctx: ToolContext) -> None:
    result = await write(ctx, path="x.txt")
    assert result.is_error
    assert "missing required argument 'content'" in result.text
    assert not (ctx.cwd / "x.txt").exists()


# --------------------------------------------------------------------------------------------
# edit
# --------------------------------------------------------------------------------------------


async def test_edit_replaces_and_reports_a_diff(ctx: ToolContext) -> None:
    target = ctx.cwd / "app.py"
    target.write_text("def main():\n    print('hello')\n\nmain()\n")
    result = await edit(ctx, "app.py", ("print('hello')", "print('bye')"))
    assert not result.is_error
    assert result.text == f"Successfully replaced 1 block(s) in {target}."
    assert target.read_text() == "def main():\n    print('bye')\n\nmain()\n"
    assert result.details is not None
    diff = result.details["diff"]
    assert f"--- {target}" in diff
    assert "-    print('hello')" in diff
    assert "+    print('bye')" in diff
    assert result.details["firstChangedLine"] == 2


async def test_edit_missing_text_quotes_an_excerpt(ctx: ToolContext) -> None:
    target = ctx.cwd / "a.txt"
    target.write_text("alpha\nbeta\n")
    result = await edit(ctx, "a.txt", ("gamma\n" + "z" * 100, "x"))
    assert result.is_error
    assert result.text.startswith(f'Could not find the oldText in {target}: "gamma\\nzzz')
    assert "…" in result.text  # the excerpt is cut
    assert result.text.endswith("The file was not changed.")
    assert target.read_text() == "alpha\nbeta\n"


async def test_edit_whitespace_hint(ctx: ToolContext) -> None:
    (ctx.cwd / "a.py").write_text("if x:\n    y = 1\n")
    result = await edit(ctx, "a.py", ("if x:\n  y = 1", "if x:\n  y = 2"))
    assert result.is_error
    assert "whitespace is ignored" in result.text


async def test_edit_line_number_hint(ctx: ToolContext) -> None:
    (ctx.cwd / "a.py").write_text("x = 1\n")
    result = await edit(ctx, "a.py", ("     1\tx = 1", "x = 2"))
    assert result.is_error
    assert "line numbers" in result.text


async def test_edit_non_unique_leaves_file_unchanged(ctx: ToolContext) -> None:
    target = ctx.cwd / "dup.txt"
    target.write_text("x = 1\nx = 1\n")
    result = await edit(ctx, "dup.txt", ("x = 1", "x = 2"))
    assert result.is_error
    assert result.text == (
        f'The oldText occurs 2 times in {target}: "x = 1"; include more surrounding context '
        "so that it matches exactly once. The file was not changed."
    )
    assert target.read_text() == "x = 1\nx = 1\n"


async def test_edit_overlapping_occurrences_count(ctx: ToolContext) -> None:
    (ctx.cwd / "o.txt").write_text("aaa")
    result = await edit(ctx, "o.txt", ("aa", "b"))
    assert result.is_error
    assert "occurs 2 times" in result.text


async def test_multiple_edits_apply_in_order(ctx: ToolContext) -> None:
    target = ctx.cwd / "m.txt"
    target.write_text("one\ntwo\nthree\n")
    result = await edit(ctx, "m.txt", ("one", "ONE"), ("three", "3"), ("ONE\ntwo", "1\n2"))
    assert not result.is_error
    assert result.text == f"Successfully replaced 3 block(s) in {target}."
    assert target.read_text() == "1\n2\n3\n"


async def test_multiple_edits_all_or_nothing(ctx: ToolContext) -> None:
    target = ctx.cwd / "m.txt"
    target.write_text("one\ntwo\nthree\n")
    result = await edit(ctx, "m.txt", ("one", "ONE"), ("four", "4"))
    assert result.is_error
    assert "the oldText of edit 2" in result.text
    assert target.read_text() == "one\ntwo\nthree\n"
    # An edit that becomes ambiguous because of an earlier one also fails everything.
    result = await edit(ctx, "m.txt", ("one", "two"), ("two", "2"))
    assert result.is_error
    assert "edit 2 occurs 2 times" in result.text
    assert target.read_text() == "one\ntwo\nthree\n"


async def test_edit_keeps_crlf(ctx: ToolContext) -> None:
    target = ctx.cwd / "win.txt"
    target.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    result = await edit(ctx, "win.txt", ("first\nsecond", "uno\ndos\ntres"))
    assert not result.is_error
    assert target.read_bytes() == b"uno\r\ndos\r\ntres\r\nthird\r\n"
    assert result.details is not None
    assert "\r" not in result.details["diff"]
    # oldText given with CRLF works too.
    result = await edit(ctx, "win.txt", ("tres\r\nthird", "end"))
    assert not result.is_error
    assert target.read_bytes() == b"uno\r\ndos\r\nend\r\n"


async def test_edit_mixed_line_endings(ctx: ToolContext) -> None:
    target = ctx.cwd / "mixed.txt"
    target.write_bytes(b"a\r\nb\r\nc\r\nd\ne\n")
    result = await edit(ctx, "mixed.txt", ("d\ne", "D\nE"))
    assert not result.is_error
    assert target.read_bytes() == b"a\r\nb\r\nc\r\nD\nE\n"


async def test_edit_keeps_bom(ctx: ToolContext) -> None:
    target = ctx.cwd / "bom.cs"
    target.write_bytes(b"\xef\xbb\xbfusing System;\nclass A {}\n")
    result = await edit(ctx, "bom.cs", ("class A {}", "class B {}"))
    assert not result.is_error
    assert target.read_bytes() == b"\xef\xbb\xbfusing System;\nclass B {}\n"
    assert result.details is not None
    assert "\ufeff" not in result.details["diff"]


async def test_edit_identical_replacement_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "s.txt").write_text("same\n")
    result = await edit(ctx, "s.txt", ("same", "same"))
    assert result.is_error
    assert result.text.startswith("No changes made to ")


async def test_edit_empty_old_text(ctx: ToolContext) -> None:
    (ctx.cwd / "s.txt").write_text("x\n")
    result = await edit(ctx, "s.txt", ("", "y"))
    assert result.is_error
    assert "is empty" in result.text
    assert (ctx.cwd / "s.txt").read_text() == "x\n"


async def test_edit_no_edits(ctx: ToolContext) -> None:
    (ctx.cwd / "s.txt").write_text("x\n")
    result = await edit(ctx, "s.txt")
    assert result.is_error
    assert "No edits were given" in result.text


@pytest.mark.parametrize("kind", ["missing", "directory", "not-utf8"])
async def test_edit_unreadable_targets(ctx: ToolContext, kind: str) -> None:
    target = ctx.cwd / "t"
    if kind == "directory":
        target.mkdir()
    elif kind == "not-utf8":
        target.write_bytes(b"\xff\xfe latin-1 \xe9\n")
    result = await edit(ctx, "t", ("a", "b"))
    assert result.is_error
    expected = {
        "missing": f"File not found: {target}",
        "directory": "is a directory",
        "not-utf8": "is not valid UTF-8",
    }[kind]
    assert expected in result.text
    if kind == "not-utf8":
        assert target.read_bytes() == b"\xff\xfe latin-1 \xe9\n"


async def test_edit_accepts_the_legacy_single_edit_shape(ctx: ToolContext) -> None:
    target = ctx.cwd / "l.txt"
    target.write_text("old\n")
    result = await execute(EditTool(), {"path": "l.txt", "oldText": "old", "newText": "new"}, ctx)
    assert not result.is_error
    assert target.read_text() == "new\n"


async def test_edit_argument_validation(ctx: ToolContext, tmp_path: Path) -> None:
    result = await execute(EditTool(), {"path": "l.txt", "edits": [{"oldText": "a"}]}, ctx)
    assert result.is_error
    assert "missing required argument 'edits[0].newText'" in result.text
    result = await execute(EditTool(), {"edits": []}, ctx)
    assert result.is_error
    assert "missing required argument 'path'" in result.text


# --------------------------------------------------------------------------------------------
# edit: what it tolerates (as pi) and says so
# --------------------------------------------------------------------------------------------


async def test_edit_tolerates_typographic_quotes_and_says_so(ctx: ToolContext) -> None:
    target = ctx.cwd / "q.py"
    target.write_text("print('don\u2019t')\nmsg = \u201chello\u201d\nkeep = \u2018x\u2019\n")
    result = await edit(ctx, "q.py", ('msg = "hello"', 'msg = "bye"'))
    assert not result.is_error, result.text
    # Only the matched span changes; the typographic quotes elsewhere stay.
    assert target.read_text() == "print('don\u2019t')\nmsg = \"bye\"\nkeep = \u2018x\u2019\n"
    assert result.text == (
        f"Successfully replaced 1 block(s) in {target}. The oldText matched only when ignoring "
        "typographic quotes."
    )
    assert result.details is not None
    assert result.details["matches"] == ["ignoring typographic quotes"]


async def test_edit_tolerates_trailing_whitespace(ctx: ToolContext) -> None:
    target = ctx.cwd / "t.py"
    target.write_text("def f():   \n    return 1\t\n\nother = 2  \n")
    result = await edit(ctx, "t.py", ("def f():\n    return 1\n", "def f():\n    return 2\n"))
    assert not result.is_error, result.text
    assert target.read_text() == "def f():\n    return 2\n\nother = 2  \n"
    assert "matched only when ignoring trailing whitespace." in result.text


async def test_edit_tolerates_crlf_with_other_differences(ctx: ToolContext) -> None:
    target = ctx.cwd / "w.txt"
    target.write_bytes("a \u2013 b  \r\nnext\r\nlast\r\n".encode())
    result = await edit(ctx, "w.txt", ("a - b\nnext", "A\nNEXT"))
    assert not result.is_error, result.text
    assert target.read_bytes() == b"A\r\nNEXT\r\nlast\r\n"
    assert result.details is not None
    assert result.details["matches"] == [
        "ignoring line endings, trailing whitespace and Unicode dashes"
    ]
    assert "matched only when ignoring trailing whitespace and Unicode dashes." in result.text


async def test_edit_exact_match_is_reported_as_exact(ctx: ToolContext) -> None:
    (ctx.cwd / "e.txt").write_text("one\ntwo\n")
    result = await edit(ctx, "e.txt", ("one", "1"), ("two", "2"))
    assert result.text == f"Successfully replaced 2 block(s) in {ctx.cwd / 'e.txt'}."
    assert result.details is not None and result.details["matches"] == ["exact", "exact"]


async def test_edit_tolerant_match_must_be_unique(ctx: ToolContext) -> None:
    target = ctx.cwd / "u.txt"
    target.write_text("say \u201chi\u201d\nsay \u201chi\u201d  \n")
    result = await edit(ctx, "u.txt", ('say "hi"', "x"))
    assert result.is_error
    assert "occurs 2 times" in result.text and "quotes" in result.text
    assert target.read_text() == "say \u201chi\u201d\nsay \u201chi\u201d  \n"


async def test_edit_tolerance_has_limits(ctx: ToolContext) -> None:
    target = ctx.cwd / "l.txt"
    target.write_text("    indented\n    next\n")
    result = await edit(ctx, "l.txt", ("indented  x", "y"))
    assert result.is_error and "Could not find the oldText" in result.text
    # Leading indentation is not ignored (it is meaningful in many languages).
    result = await edit(ctx, "l.txt", ("indented\nnext", "y"))
    assert result.is_error and "A match exists when whitespace is ignored" in result.text
    assert target.read_text() == "    indented\n    next\n"


async def test_edit_dropped_trailing_space_never_cuts_a_word(ctx: ToolContext) -> None:
    target = ctx.cwd / "n.py"
    target.write_text("x = 10\ny = \u201cs\u201d\n")
    result = await edit(ctx, "n.py", ("x = 1 ", "x = 2"))
    assert result.is_error and "Could not find" in result.text
    assert target.read_text() == "x = 10\ny = \u201cs\u201d\n"
    result = await edit(ctx, "n.py", ('y = "s" ', 'y = "t"'))
    assert not result.is_error, result.text
    assert target.read_text() == 'x = 10\ny = "t"\n'


_VARIANTS = {
    "'": ["'", "\u2018", "\u2019"],
    '"': ['"', "\u201c", "\u201d"],
    "-": ["-", "\u2013", "\u2212"],
    " ": [" ", "\u00a0"],
}


@st.composite
def messy_file(draw: st.DrawFn) -> tuple[list[str], list[str], str]:
    """Lines as a model would type them, the same lines as the file has them (typographic
    characters, trailing whitespace), and the file's line ending."""
    alphabet = st.sampled_from(list("abc xyz'\"-=()"))
    plain = draw(st.lists(st.text(alphabet, min_size=1, max_size=12), min_size=1, max_size=8))
    plain = [line.rstrip() or "z" for line in plain]
    messy = []
    for line in plain:
        chars = [draw(st.sampled_from(_VARIANTS.get(c, [c]))) for c in line]
        messy.append("".join(chars) + draw(st.sampled_from(["", " ", "\t", "  "])))
    return plain, messy, draw(st.sampled_from(["\n", "\r\n"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=messy_file(), data=st.data())
def test_tolerant_match_replaces_exactly_the_matched_lines(
    case: tuple[list[str], list[str], str], data: st.DataObject
) -> None:
    """Whole lines typed plainly find their messy counterparts; everything else keeps its bytes."""
    plain, messy, eol = case
    start = data.draw(st.integers(0, len(plain) - 1))
    stop = data.draw(st.integers(start + 1, len(plain)))
    content = "".join(line + eol for line in messy)
    old = "\n".join(plain[start:stop]) + "\n"
    assume(old.replace("\n", eol) not in content)  # an exact match wins (tested above)
    try:
        updated, tolerated = apply_edits(content, [{"oldText": old, "newText": "NEW\n"}], Path("f"))
    except ToolError as exc:
        # Only ambiguity may stop it: the plain text occurs more than once.
        assert "occurs" in exc.message, exc.message
        return
    before = "".join(line + eol for line in messy[:start])
    after = "".join(line + eol for line in messy[stop:])
    assert updated == before + "NEW" + eol + after
    assert len(tolerated) == 1
