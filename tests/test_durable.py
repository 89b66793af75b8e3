"""pitui.durable: the one atomic, durable file replacement every writer of pitui uses."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitui import durable
from pitui.durable import FolderClosedError, fsync_folder, replace_atomically


def names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


class Recorder:
    """Records the order of fsyncs (of a file or a folder) and renames."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[str] = []
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd: int) -> None:
            kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
            self.events.append(f"fsync {kind}")
            real_fsync(fd)

        def replace(src: Any, dst: Any) -> None:
            self.events.append("rename")
            real_replace(src, dst)

        monkeypatch.setattr(durable.os, "fsync", fsync)
        monkeypatch.setattr(durable.os, "replace", replace)


def test_the_file_is_synced_before_the_rename_and_the_folder_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"old")
    recorder = Recorder(monkeypatch)
    replace_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert recorder.events == ["fsync file", "rename", "fsync folder"]
    assert names(tmp_path) == ["notes.txt"]


def test_not_durable_skips_both_fsyncs_but_still_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "last"
    recorder = Recorder(monkeypatch)
    replace_atomically(target, b"abc\n", durable=False)
    assert target.read_bytes() == b"abc\n"
    assert recorder.events == ["rename"]


def test_a_failed_write_keeps_the_old_content_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "data.json"
    target.write_bytes(b"old content")
    real_write = os.write
    calls: list[int] = []

    def half_then_full_disk(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(durable.os, "write", half_then_full_disk)
    with pytest.raises(OSError) as info:
        replace_atomically(target, b"x" * 10_000)
    assert info.value.errno == errno.ENOSPC
    assert target.read_bytes() == b"old content"
    assert names(tmp_path) == ["data.json"]


def test_the_old_mode_stays_and_a_new_file_gets_what_open_would_give(
    tmp_path: Path, umask022: None
) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    replace_atomically(script, b"new")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    fresh = tmp_path / "fresh.txt"
    replace_atomically(fresh, b"x")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


def test_a_fixed_mode_is_exact_whatever_the_old_file_or_the_umask(
    tmp_path: Path, umask022: None
) -> None:
    target = tmp_path / "trusted.json"
    target.write_text("{}")
    target.chmod(0o666)
    replace_atomically(target, b"{}\n", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_the_first_original_is_kept_as_the_backup(tmp_path: Path, umask022: None) -> None:
    target = tmp_path / "s.jsonl"
    backup = tmp_path / "s.jsonl.bak"
    target.write_bytes(b"v1 original")
    replace_atomically(target, b"v3 first", mode=0o600, backup=backup)
    replace_atomically(target, b"v3 second", mode=0o600, backup=backup)
    assert target.read_bytes() == b"v3 second"
    assert backup.read_bytes() == b"v1 original"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert names(tmp_path) == ["s.jsonl", "s.jsonl.bak"]


def test_the_backup_is_a_synced_copy_where_a_hard_link_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"original")

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, "hard links are not allowed here")

    monkeypatch.setattr(durable.os, "link", no_links)
    replace_atomically(target, b"new", backup=tmp_path / "s.jsonl.bak")
    assert (tmp_path / "s.jsonl.bak").read_bytes() == b"original"
    assert not os.path.samestat(os.stat(target), os.stat(tmp_path / "s.jsonl.bak"))


def test_before_rename_sees_the_complete_temp_file_beside_the_target(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old")
    seen: list[tuple[Path, bytes, bytes]] = []

    def check(tmp: Path) -> None:
        seen.append((tmp, tmp.read_bytes(), target.read_bytes()))

    replace_atomically(target, b"new", before_rename=check)
    [(tmp, tmp_content, target_then)] = seen
    assert tmp.parent == tmp_path and tmp.name.endswith(durable.TEMP_SUFFIX)
    assert (tmp_content, target_then) == (b"new", b"old")
    assert not tmp.exists()


def test_a_failing_before_rename_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"old")

    def refuse(tmp: Path) -> None:
        raise OSError(errno.EWOULDBLOCK, "locked")

    with pytest.raises(OSError):
        replace_atomically(target, b"new", before_rename=refuse)
    assert target.read_bytes() == b"old"
    assert names(tmp_path) == ["s.jsonl"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may create files in any folder")
def test_a_folder_pitui_may_not_write_in_is_said_apart(tmp_path: Path) -> None:
    folder = tmp_path / "closed"
    folder.mkdir()
    target = folder / "f.txt"
    target.write_text("old")
    folder.chmod(0o500)
    try:
        with pytest.raises(FolderClosedError) as info:
            replace_atomically(target, b"new")
        assert isinstance(info.value, PermissionError) and info.value.errno == errno.EACCES
        assert target.read_text() == "old"
    finally:
        folder.chmod(0o700)


@pytest.mark.slow
def test_the_temp_file_a_killed_writer_left_goes_with_the_next_write(tmp_path: Path) -> None:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - exits at once, so its pid is free afterwards
        os._exit(0)
    os.waitpid(pid, 0)
    dead = tmp_path / f".trusted-projects.json.{pid}-abcd1234{durable.TEMP_SUFFIX}"
    dead.write_text("half")
    running = tmp_path / f".trusted-projects.json.{os.getpid()}-efgh5678{durable.TEMP_SUFFIX}"
    running.write_text("being written")
    replace_atomically(tmp_path / "trusted-projects.json", b"{}\n")
    assert names(tmp_path) == [running.name, "trusted-projects.json"]


def test_fsync_folder_ignores_what_cannot_be_synced(tmp_path: Path) -> None:
    fsync_folder(tmp_path / "missing")  # no error: the data was synced already
    fsync_folder(tmp_path)
