"""The tools never re-create a working directory that no longer exists (a session from another
machine or a deleted checkout): write and bash refuse, and nothing appears on disk."""

from __future__ import annotations

from pathlib import Path

from pitui.agent.tools import BashTool, ToolContext, WriteTool, execute


def gone(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path / "old" / "checkout", output_dir=tmp_path / "outputs")


async def test_write_refuses_relative_paths_and_paths_inside_a_missing_cwd(tmp_path: Path) -> None:
    ctx = gone(tmp_path)
    for path in ("a.txt", "src/deep/a.py", "../sibling.txt", str(ctx.cwd / "abs.txt")):
        result = await execute(WriteTool(), {"path": path, "content": "x"}, ctx)
        assert result.is_error, path
        assert f"The working directory {ctx.cwd} does not exist" in result.text
    assert not (tmp_path / "old").exists()


async def test_write_to_an_absolute_path_elsewhere_still_works(tmp_path: Path) -> None:
    ctx = gone(tmp_path)
    target = tmp_path / "elsewhere" / "b.txt"
    result = await execute(WriteTool(), {"path": str(target), "content": "y"}, ctx)
    assert not result.is_error, result.text
    assert target.read_text() == "y"
    assert not (tmp_path / "old").exists()


async def test_bash_refuses_a_missing_cwd(tmp_path: Path) -> None:
    ctx = gone(tmp_path)
    result = await execute(BashTool(), {"command": "touch made-here"}, ctx)
    assert result.is_error and "does not exist" in result.text
    assert not (tmp_path / "old").exists()
