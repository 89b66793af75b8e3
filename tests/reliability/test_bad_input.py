"""Every malformed or hostile file opens (or is refused with one sentence) in bounded time, from
the CLI, with no traceback and without being written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from corpus import CASES, write_corpus

from pitui.cli import main
from pitui.session import SessionFileError, SessionStore

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
                json.loads(out)
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
