"""The read tool: pi 1.6's plain output by default, numbering when ``tools.read.lineNumbers``
is on, limits and notes, binary files, images, errors. Most tests run numbered (each line's
number shows where it came from); the plain output has tests of its own."""

from __future__ import annotations

import base64
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from pitui.agent.tools import ReadTool, ToolContext, ToolResult, execute


def tiny_png() -> bytes:
    """A valid 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


async def read(ctx: ToolContext, **args: Any) -> ToolResult:
    return await execute(ReadTool(line_numbers=True), args, ctx)


async def read_plain(ctx: ToolContext, **args: Any) -> ToolResult:
    return await execute(ReadTool(), args, ctx)


async def test_the_default_is_pis_plain_text(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("first\n\tsecond\nthird\n")
    result = await read_plain(ctx, path="a.txt")
    assert result.text == "first\n\tsecond\nthird"
    assert "line numbers" not in ReadTool().description
    assert "line numbers" in ReadTool(line_numbers=True).description


async def test_plain_output_notes_and_offsets(ctx: ToolContext) -> None:
    (ctx.cwd / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    first = await read_plain(ctx, path="n.txt")
    lines = first.text.split("\n")
    assert lines[0] == "line 1" and lines[1999] == "line 2000"
    assert lines[-1] == "[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]"
    part = await read_plain(ctx, path="n.txt", offset=10, limit=2)
    assert part.text == "line 10\nline 11\n\n[2989 more lines in file. Use offset=12 to continue.]"


async def test_plain_output_fits_more_of_a_wide_file_in_the_byte_limit(ctx: ToolContext) -> None:
    (ctx.cwd / "w.txt").write_text("".join("x" * 99 + "\n" for _ in range(1000)))
    plain = await read_plain(ctx, path="w.txt")
    numbered_result = await read(ctx, path="w.txt")
    assert plain.details is not None and numbered_result.details is not None
    assert plain.details["endLine"] > numbered_result.details["endLine"]
    assert plain.text.endswith(
        "[Showing lines 1-512 of 1000 (50 KB limit). Use offset=513 to continue.]"
    )


def test_the_setting_numbers_the_agents_read_tool(tmp_path: Path) -> None:
    from pitui.agent.session import AgentSession
    from pitui.config.settings import Settings
    from pitui.session import SessionStore

    def read_tool(settings: dict[str, Any]) -> ReadTool:
        store = SessionStore.create(tmp_path / "s", str(tmp_path))
        agent = AgentSession(store, cwd=tmp_path, settings=Settings.from_dict(settings))
        tool = next(t for t in agent.tools if t.name == "read")
        assert isinstance(tool, ReadTool)
        return tool

    assert read_tool({}).line_numbers is False
    assert read_tool({"tools": {"read": {"lineNumbers": True}}}).line_numbers is True


def numbered(start: int, lines: list[str]) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=start))


async def test_lines_are_numbered_like_cat_n(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("first\n\tsecond\nthird\n")
    result = await read(ctx, path="a.txt")
    assert not result.is_error
    assert result.text == "     1\tfirst\n     2\t\tsecond\n     3\tthird"
    assert result.details is not None
    assert result.details["totalLines"] == 3
    assert result.details["truncated"] is False


async def test_last_line_without_newline_and_absolute_path(ctx: ToolContext) -> None:
    path = ctx.cwd / "b.txt"
    path.write_text("one\ntwo")
    result = await read(ctx, path=str(path))
    assert result.text == numbered(1, ["one", "two"])


async def test_missing_file_names_the_path(ctx: ToolContext) -> None:
    result = await read(ctx, path="nope/missing.py")
    assert result.is_error
    assert result.text == f"File not found: {ctx.cwd / 'nope' / 'missing.py'}"


async def test_directory_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "src").mkdir()
    result = await read(ctx, path="src")
    assert result.is_error
    assert "is a directory" in result.text


async def test_fifo_is_not_a_regular_file(ctx: ToolContext) -> None:
    os.mkfifo(ctx.cwd / "pipe")
    result = await read(ctx, path="pipe")
    assert result.is_error
    assert "not a regular file" in result.text


async def test_binary_file_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "blob.bin").write_bytes(b"ELF\x00\x01\x02" + bytes(range(256)))
    result = await read(ctx, path="blob.bin")
    assert result.is_error
    assert "is a binary file" in result.text


async def test_png_image_is_returned_as_an_image_block(ctx: ToolContext) -> None:
    data = tiny_png()
    (ctx.cwd / "dot.png").write_bytes(data)
    result = await read(ctx, path="dot.png")
    assert not result.is_error
    assert result.content[0] == {"type": "text", "text": "Read image file [image/png]"}
    image = result.content[1]
    assert image["type"] == "image"
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]) == data


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00\x00\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 \x00\x00", "image/webp"),
    ],
)
async def test_other_images_by_magic_bytes(ctx: ToolContext, head: bytes, mime: str) -> None:
    (ctx.cwd / "picture.dat").write_bytes(head + b"\x00" * 32)
    result = await read(ctx, path="picture.dat")
    assert not result.is_error
    assert result.content[1]["mimeType"] == mime


async def test_offset_and_limit(ctx: ToolContext) -> None:
    lines = [f"line {n}" for n in range(1, 11)]
    (ctx.cwd / "ten.txt").write_text("\n".join(lines) + "\n")
    result = await read(ctx, path="ten.txt", offset=3, limit=4)
    assert result.text == (
        numbered(3, lines[2:6]) + "\n\n[4 more lines in file. Use offset=7 to continue.]"
    )
    assert result.details is not None
    assert (result.details["startLine"], result.details["endLine"]) == (3, 6)
    # Reading up to the end: no note.
    result = await read(ctx, path="ten.txt", offset=7, limit=100)
    assert result.text == numbered(7, lines[6:])
    # Numbers given as strings or floats are accepted.
    result = await read(ctx, path="ten.txt", offset="10", limit=1.0)
    assert result.text == numbered(10, ["line 10"])


async def test_offset_beyond_end_is_an_error(ctx: ToolContext) -> None:
    (ctx.cwd / "two.txt").write_text("a\nb\n")
    result = await read(ctx, path="two.txt", offset=3)
    assert result.is_error
    assert result.text == "Offset 3 is beyond the end of the file (2 lines total)."
    (ctx.cwd / "partial.txt").write_text("a\nb")
    result = await read(ctx, path="partial.txt", offset=9)
    assert "(2 lines total)" in result.text


async def test_bad_offset_and_limit(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("a\n")
    assert (await read(ctx, path="a.txt", offset=-1)).is_error
    assert (await read(ctx, path="a.txt", limit=0)).is_error
    assert (await read(ctx, path="a.txt", offset=1.5)).is_error
    # offset 0 is taken as the first line.
    assert (await read(ctx, path="a.txt", offset=0)).text == numbered(1, ["a"])


async def test_line_limit_truncation_note(ctx: ToolContext) -> None:
    (ctx.cwd / "long.txt").write_text("".join(f"{n}\n" for n in range(1, 2501)))
    result = await read(ctx, path="long.txt")
    body, note = result.text.split("\n\n")
    assert body == numbered(1, [str(n) for n in range(1, 2001)])
    assert note == "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
    assert result.details is not None
    assert result.details["truncated"] is True
    rest = await read(ctx, path="long.txt", offset=2001)
    assert rest.text == numbered(2001, [str(n) for n in range(2001, 2501)])
    # A limit above 2000 is capped at 2000 and says so.
    capped = await read(ctx, path="long.txt", limit=5000)
    assert capped.text.endswith("[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")


async def test_byte_limit_truncation_note(ctx: ToolContext) -> None:
    lines = [f"{n:04d}" + "x" * 96 for n in range(1, 1001)]
    (ctx.cwd / "wide.txt").write_text("\n".join(lines) + "\n")
    result = await read(ctx, path="wide.txt")
    body, note = result.text.split("\n\n")
    shown = body.split("\n")
    assert len(body.encode()) <= 50 * 1024
    end = len(shown)
    assert 400 < end < 1000
    assert note == (
        f"[Showing lines 1-{end} of 1000 (50 KB limit). Use offset={end + 1} to continue.]"
    )
    nxt = await read(ctx, path="wide.txt", offset=end + 1)
    assert nxt.text.split("\n")[0] == f"{end + 1:>6}\t{lines[end]}"


async def test_long_lines_are_cut_with_a_marker(ctx: ToolContext) -> None:
    (ctx.cwd / "min.js").write_text("a" * 2500 + "\nshort\n" + "é" * 100_000 + "\n")
    result = await read(ctx, path="min.js")
    first, second, third = result.text.split("\n")
    assert first == "     1\t" + "a" * 2000 + "... [line truncated: 500 more characters]"
    assert second == "     2\tshort"
    assert third == "     3\t" + "é" * 2000 + "... [line truncated: 98000 more characters]"


async def test_exactly_2000_chars_is_not_cut(ctx: ToolContext) -> None:
    (ctx.cwd / "edge.txt").write_text("b" * 2000)
    assert (await read(ctx, path="edge.txt")).text == "     1\t" + "b" * 2000


async def test_empty_file(ctx: ToolContext) -> None:
    (ctx.cwd / "empty.txt").write_text("")
    result = await read(ctx, path="empty.txt")
    assert not result.is_error
    assert result.text == "(empty file)"


async def test_crlf_bom_and_invalid_utf8(ctx: ToolContext) -> None:
    (ctx.cwd / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nbad \xff byte\r\n")
    result = await read(ctx, path="win.txt")
    assert result.text == numbered(1, ["one", "two", "bad \ufffd byte"])


async def test_home_is_expanded(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    home = ctx.cwd.parent / "home"
    home.mkdir()
    (home / "notes.md").write_text("hello\n")
    monkeypatch.setenv("HOME", str(home))
    assert (await read(ctx, path="~/notes.md")).text == numbered(1, ["hello"])


async def test_path_is_relative_to_cwd(ctx: ToolContext, tmp_path: Path) -> None:
    (ctx.cwd / "sub").mkdir()
    (ctx.cwd / "sub" / "f.txt").write_text("inside\n")
    (tmp_path / "f.txt").write_text("outside\n")
    assert (await read(ctx, path="sub/f.txt")).text == numbered(1, ["inside"])
    assert (await read(ctx, path="../f.txt")).text == numbered(1, ["outside"])


async def test_huge_file_is_streamed(ctx: ToolContext) -> None:
    """A 200k-line file: shows the slice asked for and counts every line."""
    with open(ctx.cwd / "big.log", "w") as f:
        f.writelines(f"row {n}\n" for n in range(1, 200_001))
    result = await read(ctx, path="big.log", offset=150_000, limit=2)
    assert result.text == (
        numbered(150_000, ["row 150000", "row 150001"])
        + "\n\n[49999 more lines in file. Use offset=150002 to continue.]"
    )
