"""``write`` and ``edit`` replace a file through a temp file and a rename: a kill -9 or a full
disk mid-write leaves the old content or the new one, never a truncated file."""

from __future__ import annotations

import errno
import os
import random
import signal
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitui import durable
from pitui.agent.tools import EditTool, ToolContext, ToolResult, WriteTool, execute
from pitui.agent.tools import replace as replace_module
from pitui.agent.tools.write import write_text_file

KILLS = 25


async def write(ctx: ToolContext, path: str, content: str) -> ToolResult:
    return await execute(WriteTool(), {"path": path, "content": content}, ctx)


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> ToolResult:
    return await execute(
        EditTool(), {"path": path, "edits": [{"oldText": old, "newText": new}]}, ctx
    )


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".pitui-tmp"))


@pytest.fixture
def disk_full(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every ``os.write`` writes half of what it is given, then the disk is full."""
    real_write = os.write
    calls: list[int] = []

    def fake_write(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1 and len(data) > 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(replace_module.os, "write", fake_write)
    yield


async def test_write_on_a_full_disk_keeps_the_old_content(
    ctx: ToolContext, disk_full: None
) -> None:
    target = ctx.cwd / "main.py"
    target.write_text("print('old')\n" * 100)
    result = await write(ctx, "main.py", "print('new')\n" * 1000)
    assert result.is_error
    assert result.text == f"Could not write {target}: the disk is full; the file was not changed."
    assert target.read_text() == "print('old')\n" * 100
    assert leftovers(ctx.cwd) == []


async def test_new_file_on_a_full_disk_leaves_nothing(ctx: ToolContext, disk_full: None) -> None:
    result = await write(ctx, "new.py", "x" * 10_000)
    assert (
        result.text
        == f"Could not write {ctx.cwd / 'new.py'}: the disk is full; nothing was written."
    )
    assert sorted(os.listdir(ctx.cwd)) == []


async def test_edit_on_a_full_disk_keeps_the_old_content(ctx: ToolContext, disk_full: None) -> None:
    target = ctx.cwd / "a.py"
    target.write_text("alpha = 1\n" * 500)
    result = await edit(ctx, "a.py", "alpha = 1\n" * 500, "beta = 2\n" * 500)
    assert result.is_error and "the disk is full; the file was not changed." in result.text
    assert target.read_text() == "alpha = 1\n" * 500
    assert leftovers(ctx.cwd) == []


async def test_fsync_failure_keeps_the_old_content(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = ctx.cwd / "a.txt"
    target.write_text("old")

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(replace_module.os, "fsync", failing_fsync)
    result = await write(ctx, "a.txt", "new")
    assert result.is_error and result.text.endswith("; the file was not changed.")
    assert target.read_text() == "old"
    assert leftovers(ctx.cwd) == []


async def test_write_replaces_the_file_and_keeps_its_mode(ctx: ToolContext) -> None:
    target = ctx.cwd / "run.sh"
    target.write_text("#!/bin/sh\necho old\n")
    target.chmod(0o750)
    inode = target.stat().st_ino
    assert not (await write(ctx, "run.sh", "#!/bin/sh\necho new\n")).is_error
    info = target.stat()
    assert info.st_ino != inode  # a new file renamed over the old one
    assert stat.S_IMODE(info.st_mode) == 0o750
    assert (info.st_uid, info.st_gid) == (os.getuid(), os.getgid())
    assert target.read_text() == "#!/bin/sh\necho new\n"
    assert (await edit(ctx, "run.sh", "new", "edited")).is_error is False
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


async def test_a_new_file_gets_the_umask_mode(ctx: ToolContext) -> None:
    old = os.umask(0o027)
    try:
        assert not (await write(ctx, "fresh.txt", "x")).is_error
    finally:
        os.umask(old)
    assert stat.S_IMODE((ctx.cwd / "fresh.txt").stat().st_mode) == 0o640


async def test_a_symlink_is_written_through(ctx: ToolContext) -> None:
    real = ctx.cwd / "real" / "config.toml"
    real.parent.mkdir()
    real.write_text("a = 1\n")
    link = ctx.cwd / "config.toml"
    link.symlink_to(Path("real") / "config.toml")
    assert not (await write(ctx, "config.toml", "a = 2\n")).is_error
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "config.toml")
    assert real.read_text() == "a = 2\n"
    assert not (await edit(ctx, "config.toml", "a = 2", "a = 3")).is_error
    assert link.is_symlink() and real.read_text() == "a = 3\n"
    assert leftovers(ctx.cwd) == [] and leftovers(real.parent) == []


async def test_a_hard_linked_file_stays_linked(ctx: ToolContext) -> None:
    first = ctx.cwd / "first.txt"
    first.write_text("old")
    second = ctx.cwd / "second.txt"
    os.link(first, second)
    assert not (await write(ctx, "first.txt", "new")).is_error
    assert second.read_text() == "new" and first.stat().st_ino == second.stat().st_ino


@pytest.fixture
def closed_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """No file may be created in the folder (a writable file in a read-only folder; faked, as
    root may create files anywhere)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(durable.tempfile, "mkstemp", refuse)


async def test_a_writable_file_in_a_closed_folder_is_rewritten_in_place(
    ctx: ToolContext, closed_folder: None
) -> None:
    target = ctx.cwd / "notes.txt"
    target.write_text("old")
    inode = target.stat().st_ino
    assert not (await write(ctx, "notes.txt", "new")).is_error
    assert target.read_text() == "new" and target.stat().st_ino == inode


async def test_a_new_file_in_a_closed_folder_is_refused(
    ctx: ToolContext, closed_folder: None
) -> None:
    result = await write(ctx, "new.txt", "x")
    assert result.is_error and "permission denied" in result.text
    assert not (ctx.cwd / "new.txt").exists()


def _writer(path: Path, contents: tuple[bytes, bytes], ready_fd: int) -> None:  # pragma: no cover
    os.write(ready_fd, b"r")
    n = 0
    while True:
        write_text_file(path, contents[n % 2])
        n += 1


@pytest.mark.slow
def test_kill_9_mid_write_leaves_the_old_or_the_new_content(tmp_path: Path) -> None:
    """A process rewrites a big file over and over and is killed at random moments."""
    target = tmp_path / "big.txt"
    initial = b"initial\n" * 1000
    contents = (b"a" * (8 << 20), b"b" * (12 << 20))
    target.write_bytes(initial)
    allowed = {initial, *contents}
    rng = random.Random(12)
    left_behind = 0
    for _ in range(KILLS):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_end)
            try:
                _writer(target, contents, write_end)
            finally:
                os._exit(0)
        os.close(write_end)
        assert os.read(read_end, 1) == b"r"
        os.close(read_end)
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        data = target.read_bytes()
        assert data in allowed, f"a torn file of {len(data)} bytes"
        # A killed writer may leave its temp file, never more: the next write removes it.
        left = leftovers(tmp_path)
        assert len(left) <= 1, left
        left_behind += len(left)
    assert left_behind >= 3  # the clean-up was really exercised
    write_text_file(target, b"after the kills\n")
    assert sorted(os.listdir(tmp_path)) == ["big.txt"]
    assert target.read_text() == "after the kills\n"


@pytest.mark.slow
def test_a_checkpoint_removes_temp_files_killed_writes_left_and_saves_none(
    tmp_path: Path,
) -> None:
    """Temp files of killed atomic writes anywhere in the folder (a dead process's, one of
    an older pitui untouched for long) are removed by the next file checkpoint; a running
    write's temp file stays, and none is ever saved in a checkpoint."""
    from pitui.checkpoint.settings import CheckpointSettings
    from pitui.checkpoint.store import CheckpointStore

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("x\n")
    pid = os.fork()
    if pid == 0:  # pragma: no cover - a process that exits at once: its pid is then free
        os._exit(0)
    os.waitpid(pid, 0)
    dead = project / "src" / f".app.py.{pid}-a1b2c3d4.pitui-tmp"
    old_style = project / ".notes.md.zz9_ab12.pitui-tmp"
    running = project / "src" / f".app.py.{os.getpid()}-e5f6g7h8.pitui-tmp"
    for temp in (dead, old_style, running):
        temp.write_text("half written")
    hour_ago = time.time() - 3600
    os.utime(old_style, (hour_ago, hour_ago))
    store = CheckpointStore.open(project, CheckpointSettings(), tmp_path / "state")
    capture = store.capture("s")
    assert not dead.exists() and not old_style.exists()
    assert running.exists()
    assert set(store.files(capture.commit)) == {"src/app.py"}


async def test_a_long_file_name_still_gets_a_temp_file(ctx: ToolContext) -> None:
    name = "\u00e9" * 120 + ".txt"  # 244 bytes: a temp name with the whole name would not fit
    (ctx.cwd / name).write_text("old")
    result = await write(ctx, name, "new")
    assert not result.is_error, result.text
    assert (ctx.cwd / name).read_text() == "new"
    assert leftovers(ctx.cwd) == []
