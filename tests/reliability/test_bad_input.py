"""Every malformed or hostile file opens (or is refused with one sentence) in bounded time, from
the CLI, with no traceback and without being written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus import CASES, SPECIAL, make_special, write_corpus

from pitui.cli import main
from pitui.session import SessionFileError, SessionStore, codec

REFUSED = {"no_header", "garbage", "binary", "whitespace_only", "header_missing_id"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("corpus"))


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 30


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_opens_or_refuses_in_one_sentence(
    name: str, corpus: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = corpus[name]
    before = path.read_bytes()
    for argv in (["context", str(path), "--json"], ["tree", str(path)], ["context", str(path)]):
        started = time.monotonic()
        code = main(argv)
        elapsed = time.monotonic() - started
        out, err = capsys.readouterr()
        assert elapsed < 60, f"{name}: {argv[0]} took {elapsed:.1f}s"
        assert "Traceback" not in err and "Traceback" not in out
        if name in REFUSED:
            assert code == 2, f"{name}: expected a refusal"
            assert err.count("\n") == 1 and err.startswith("pitui: ")
        else:
            assert code == 0, f"{name}: {err}"
            for warning in err.splitlines():
                assert warning.startswith("pitui: warning: ")
            if argv[-1] == "--json":
                # orjson first (deep_tool_arguments is too deep for the stdlib), the stdlib for
                # what orjson refuses (huge numbers, lone surrogates).
                codec.loads(out)
    assert path.read_bytes() == before, f"{name}: reading wrote to the file"


@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED))
def test_store_can_append_after_opening(name: str, corpus: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / f"{name}.jsonl"
    copy.write_bytes(corpus[name].read_bytes())
    store = SessionStore.open(copy)
    count = len(store)
    store.append_message({"role": "user", "content": "still works", "timestamp": 1})
    store.close()
    again = SessionStore.open(copy, read_only=True)
    assert len(again) == count + 1
    assert again.project().messages[-1]["content"] == "still works"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_files_raise_one_sentence(name: str, corpus: dict[str, Path]) -> None:
    with pytest.raises(SessionFileError) as info:
        SessionStore.open(corpus[name])
    message = str(info.value)
    assert message.endswith(".") and "\n" not in message


def _limited() -> None:  # pragma: no cover - runs in the child before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_paths_that_are_not_regular_files_are_refused_at_once(name: str, tmp_path: Path) -> None:
    """A FIFO would block the open forever, /dev/zero would fill memory: both are refused in one
    sentence, in a child process with bounded memory and time."""
    path = make_special(tmp_path)[name]
    for argv in (["context", str(path)], ["tree", str(path), "--json"], ["--session", str(path)]):
        if argv[0] == "--session":
            argv = [*argv, "-p", "hi", "--model", "openai/test-model"]
            argv += ["--api-base", "http://127.0.0.1:9/v1"]
        started = time.monotonic()
        try:
            child = subprocess.run(
                [sys.executable, "-m", "pitui", *argv],
                capture_output=True,
                text=True,
                timeout=20,
                preexec_fn=_limited,
                env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{name}: pitui {argv[0]} hung")
        assert time.monotonic() - started < 20
        assert child.returncode == 2, (name, argv, child.returncode, child.stderr[-500:])
        assert child.stderr.count("\n") == 1 and child.stderr.startswith("pitui: ")
        assert "not a regular file" in child.stderr or "directory" in child.stderr
        assert "Traceback" not in child.stderr


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_store_refuses_paths_that_are_not_regular_files(name: str, tmp_path: Path) -> None:
    path = make_special(tmp_path)[name]
    with pytest.raises(SessionFileError) as info:
        SessionStore.open(path)
    message = str(info.value)
    assert message.endswith(".") and "\n" not in message
    assert str(path) in message


@pytest.mark.timeout(30)
def test_listing_a_folder_with_special_files_never_blocks(tmp_path: Path) -> None:
    from pitui.session.listing import find_most_recent, list_sessions, read_session_info

    special = make_special(tmp_path)
    real = tmp_path / "real.jsonl"
    real.write_bytes(CASES["header_only"]())
    assert [info.path for info in list_sessions([tmp_path])] == [str(real)]
    assert find_most_recent(tmp_path) == real
    for path in special.values():
        assert read_session_info(path) is None
