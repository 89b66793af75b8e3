"""Real token counts with tiktoken: offline loading, per-role rules, the per-entry cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pitui.compaction import tiktoken_count as tc
from pitui.compaction.estimator import get_estimator
from pitui.compaction.tiktoken_count import (
    CL100K,
    IMAGE_TOKENS,
    O200K,
    TiktokenEstimator,
    encoding_for_model,
    ensure_tiktoken_cache,
)
from pitui.session import SessionStore
from pitui.session.projection import Projection

REPO = Path(__file__).resolve().parents[2]

# Run in a child interpreter: no tiktoken cache anywhere but litellm's, sockets refused.
NO_NETWORK = """\
import socket

def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""

OFFLINE_LOAD = """\
import json, os, sys
from pitui.compaction.estimator import get_estimator

o200k = get_estimator("tiktoken", "openai/gpt-4o")
cl100k = get_estimator("tiktoken", "anthropic/claude-sonnet-4")
print(json.dumps({
    "o200k": [o200k.encoding.name, o200k.tokens("hello world")],
    "cl100k": [cl100k.encoding.name, cl100k.tokens("hello world")],
    "cache_dir": os.environ.get("TIKTOKEN_CACHE_DIR"),
    "heavy": sorted(m for m in ("litellm", "textual", "rich") if m in sys.modules),
}))
"""

TIKTOKEN_ALONE = """\
import tiktoken
try:
    tiktoken.get_encoding("o200k_base")
except Exception as exc:
    print("failed", type(exc).__name__)
else:
    print("loaded")
"""


def offline_env(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")
    }
    empty = tmp_path / "tmp"
    empty.mkdir(exist_ok=True)
    env["TMPDIR"] = str(empty)  # tiktoken's default cache lives under the temp dir
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env[proxy] = "http://127.0.0.1:9"
    return env


def run_offline(script: str, tmp_path: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", NO_NETWORK + script],
        capture_output=True,
        text=True,
        env=offline_env(tmp_path),
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module", autouse=True)
def restore_cache_env() -> Iterator[None]:
    """Loading an encoding may set TIKTOKEN_CACHE_DIR in this process; put it back after."""
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    yield
    if before is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = before


@pytest.fixture(scope="module")
def cl() -> TiktokenEstimator:
    return TiktokenEstimator(CL100K)


@pytest.fixture(scope="module")
def o2() -> TiktokenEstimator:
    return TiktokenEstimator(O200K)


def direct(encoding_name: str, text: str) -> int:
    """Tokens computed with tiktoken directly (after the module has made the file findable)."""
    import tiktoken

    tc.load_encoding(encoding_name)
    return len(tiktoken.get_encoding(encoding_name).encode_ordinary(text))


# ----------------------------------------------------------------------------- loading


@pytest.mark.slow
def test_offline_load_uses_litellm_copy_without_importing_litellm(tmp_path: Path) -> None:
    result = json.loads(run_offline(OFFLINE_LOAD, tmp_path))
    assert result["o200k"] == [O200K, 2]
    assert result["cl100k"] == [CL100K, 2]
    bundled = tc.bundled_cache_dir()
    assert bundled is not None
    assert result["cache_dir"] == str(bundled)
    assert result["heavy"] == []


@pytest.mark.slow
def test_offline_harness_really_is_offline(tmp_path: Path) -> None:
    """Without pitui's help, tiktoken cannot load the encoding in the same child setup."""
    assert run_offline(TIKTOKEN_ALONE, tmp_path).startswith("failed")


def test_bundled_dir_holds_both_encodings() -> None:
    bundled = tc.bundled_cache_dir()
    assert bundled is not None
    for name in (CL100K, O200K):
        assert (bundled / tc.cache_file_name(name)).is_file()


def test_user_cache_dir_with_the_encoding_is_kept(tmp_path: Path) -> None:
    bundled = tc.bundled_cache_dir()
    assert bundled is not None
    user_dir = tmp_path / "cache"
    user_dir.mkdir()
    name = tc.cache_file_name(CL100K)
    shutil.copyfile(bundled / name, user_dir / name)
    env = {"TIKTOKEN_CACHE_DIR": str(user_dir)}
    assert ensure_tiktoken_cache(CL100K, env) == str(user_dir)
    assert env == {"TIKTOKEN_CACHE_DIR": str(user_dir)}


def test_user_cache_dir_without_the_encoding_is_replaced(tmp_path: Path) -> None:
    bundled = tc.bundled_cache_dir()
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path)}
    assert ensure_tiktoken_cache(O200K, env) == str(bundled)
    assert env["TIKTOKEN_CACHE_DIR"] == str(bundled)


def test_unset_cache_dir_points_at_litellm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    env: dict[str, str] = {}
    assert ensure_tiktoken_cache(O200K, env) == str(tc.bundled_cache_dir())
    assert env["TIKTOKEN_CACHE_DIR"] == str(tc.bundled_cache_dir())


def test_encodings_load_once_across_threads() -> None:
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(tc.load_encoding(CL100K))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(r is results[0] for r in results)


def test_preload_loads_on_a_background_thread() -> None:
    estimator = TiktokenEstimator(O200K)
    thread = estimator.preload()
    assert thread.daemon
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert estimator.encoding is tc.load_encoding(O200K)
    assert estimator.tokens("hello world") == direct(O200K, "hello world")


def test_unknown_encoding_is_rejected() -> None:
    with pytest.raises(ValueError):
        TiktokenEstimator("p50k_base")
    with pytest.raises(ValueError):
        tc.load_encoding("gpt2")


# ----------------------------------------------------------------------------- model -> encoding


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("openai/gpt-4.1", O200K),
        ("openai/gpt-4", O200K),
        ("azure/my-deployment", O200K),
        ("gpt-4o-mini", O200K),
        ("gpt-4.1-nano", O200K),
        ("gpt-5", O200K),
        ("o1-preview", O200K),
        ("o3-mini", O200K),
        ("o4-mini", O200K),
        ("chatgpt-4o-latest", O200K),
        ("openrouter/openai/gpt-5", O200K),
        ("GPT-4o", O200K),
        ("gpt-4", CL100K),
        ("gpt-3.5-turbo", CL100K),
        ("anthropic/claude-sonnet-4", CL100K),
        ("claude-opus-4", CL100K),
        ("openai", CL100K),
        ("", CL100K),
        (None, CL100K),
    ],
)
def test_encoding_for_model(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


def test_get_estimator_tiktoken_openai_is_shared_o200k() -> None:
    estimator = get_estimator("tiktoken", "openai/gpt-4.1")
    assert isinstance(estimator, TiktokenEstimator)
    assert estimator.name == "tiktoken"
    assert estimator.encoding_name == O200K
    assert estimator.encoding.name == O200K
    assert get_estimator("tiktoken", "gpt-4o") is estimator
    other = get_estimator("tiktoken", "anthropic/claude-sonnet-4")
    assert isinstance(other, TiktokenEstimator)
    assert other.encoding_name == CL100K
    assert TiktokenEstimator.for_model(None) is other


# ----------------------------------------------------------------------------- known counts


def test_hello_world_counts(cl: TiktokenEstimator, o2: TiktokenEstimator) -> None:
    assert cl.tokens("hello world") == 2
    assert o2.tokens("hello world") == direct(O200K, "hello world")
    text = "def f(x):\n    return x ** 2  # 平方 🚀\n"
    assert cl.tokens(text) == direct(CL100K, text)
    assert o2.tokens(text) == direct(O200K, text)
    assert cl.tokens("") == 0


def test_special_token_text_counts_as_text(cl: TiktokenEstimator, o2: TiktokenEstimator) -> None:
    text = "before <|endoftext|> <|im_start|>system<|im_end|> <|fim_prefix|> after"
    for estimator in (cl, o2):
        n = estimator.count({"role": "user", "content": text})
        assert n == len(estimator.encoding.encode_ordinary(text))
        assert n > estimator.tokens("before  after")


def test_lone_surrogate_does_not_raise(cl: TiktokenEstimator) -> None:
    assert cl.count({"role": "user", "content": "bad \ud800 text"}) > 0


# ----------------------------------------------------------------------------- per-role rules


def test_user_string_and_blocks(cl: TiktokenEstimator) -> None:
    t = cl.tokens
    assert cl.count({"role": "user", "content": "hello world"}) == 2
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image", "data": "iVBORw0KGgo" * 1000, "mimeType": "image/png"},
            {"type": "text", "text": "and this"},
        ],
        "timestamp": 1700000000000,
    }
    assert cl.count(message) == t("look at this") + t("and this") + IMAGE_TOKENS


def test_image_is_1200_tokens(cl: TiktokenEstimator) -> None:
    image = {"type": "image", "data": "x" * 100_000, "mimeType": "image/png"}
    assert IMAGE_TOKENS == 1200
    assert cl.count({"role": "user", "content": [image]}) == 1200
    assert cl.count({"role": "toolResult", "content": [image, image]}) == 2400
    assert cl.count({"role": "custom", "content": [image]}) == 1200


def test_assistant_text_thinking_and_tool_calls(cl: TiktokenEstimator) -> None:
    t = cl.tokens
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me read the file first."},
            {"type": "text", "text": "Reading it."},
            {
                "type": "toolCall",
                "id": "call_1",
                "name": "read",
                "arguments": {"path": "src/main.py", "limit": 2.0, "ok": True, "s": "é"},
            },
        ],
        "usage": {"input": 100, "output": 20, "totalTokens": 120},
        "model": "claude-sonnet-4",
        "stopReason": "toolUse",
    }
    expected = (
        t("Let me read the file first.")
        + t("Reading it.")
        + t("read")
        + t('{"path":"src/main.py","limit":2,"ok":true,"s":"é"}')
    )
    assert cl.count(message) == expected
    assert cl.count({"role": "assistant", "content": [{"type": "toolCall", "name": "ls"}]}) == (
        t("ls") + t("null")
    )
    assert cl.count({"role": "assistant", "content": "not a list"}) == 0


def test_tool_result_user_custom_content(cl: TiktokenEstimator) -> None:
    t = cl.tokens
    result = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "line 1\nline 2\n"}],
        "details": {"lines": 2, "huge": "z" * 5000},
        "isError": False,
    }
    assert cl.count(result) == t("line 1\nline 2\n")
    custom = {"role": "custom", "customType": "note", "content": "remember this", "display": True}
    assert cl.count(custom) == t("remember this")


def test_bash_execution_and_summaries(cl: TiktokenEstimator) -> None:
    t = cl.tokens
    bash = {"role": "bashExecution", "command": "ls -la", "output": "total 0\n", "exitCode": 0}
    assert cl.count(bash) == t("ls -la") + t("total 0\n")
    summary = "## Goal\nShip the estimator.\n"
    for role in ("compactionSummary", "branchSummary"):
        assert cl.count({"role": role, "summary": summary, "tokensBefore": 99}) == t(summary)
    assert cl.count({"role": "compactionSummary", "summary": None}) == 0


def test_system_message_counts_content_sections_and_tools(cl: TiktokenEstimator) -> None:
    t = cl.tokens
    tools = [
        {
            "name": "read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]
    message = {
        "role": "system",
        "content": "You are a coding agent.",
        "sections": {"agents": "Follow AGENTS.md.", "empty": "", "gone": None},
        "toolsAdded": tools,
        "toolsRemoved": [{"name": "bash"}],
    }
    tools_json = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    expected = t("You are a coding agent.") + t("Follow AGENTS.md.") + t(tools_json)
    assert cl.count(message) == expected


def test_unknown_roles_count_zero(cl: TiktokenEstimator) -> None:
    assert cl.count({"role": "mystery", "content": "text"}) == 0
    assert cl.count({}) == 0


# ----------------------------------------------------------------------------- caching


class CountingEncoder:
    def __init__(self, estimator: TiktokenEstimator, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        real = estimator.encoding.encode_ordinary

        def encode_ordinary(text: str) -> list[int]:
            self.texts.append(text)
            return real(text)

        monkeypatch.setattr(estimator.encoding, "encode_ordinary", encode_ordinary)


def test_count_entry_cache_hit_does_not_encode(monkeypatch: pytest.MonkeyPatch) -> None:
    estimator = TiktokenEstimator(CL100K)
    calls = CountingEncoder(estimator, monkeypatch)
    message = {"role": "user", "content": "hello world, this is cached"}
    first = estimator.count_entry(("e1", None), message)
    assert calls.texts == ["hello world, this is cached"]
    assert estimator.count_entry(("e1", None), message) == first
    assert len(calls.texts) == 1
    assert estimator.cached(("e1", None)) == first
    # Another edit of the same entry is another key.
    edited = {"role": "user", "content": "short"}
    assert estimator.count_entry(("e1", "edit1"), edited) == estimator.tokens("short")
    assert len(calls.texts) == 3  # the miss, plus the direct tokens() call above
    # count() itself never caches.
    estimator.count(message)
    assert len(calls.texts) == 4


def test_lru_is_bounded_and_refreshed_on_hit() -> None:
    estimator = TiktokenEstimator(CL100K, cache_size=2)
    a, b, c = ("a", None), ("b", None), ("c", None)
    estimator.count_entry(a, {"role": "user", "content": "a"})
    estimator.count_entry(b, {"role": "user", "content": "b"})
    estimator.count_entry(a, {"role": "user", "content": "a"})  # a is now the newest
    estimator.count_entry(c, {"role": "user", "content": "c"})
    assert estimator.cache_len() == 2
    assert estimator.cached(b) is None
    assert estimator.cached(a) is not None
    assert estimator.cached(c) is not None
    estimator.clear_cache()
    assert estimator.cache_len() == 0


def hand_projection() -> Projection:
    system = {"role": "system", "content": "Be brief.", "toolsAdded": [{"name": "read"}]}
    patch = {"role": "system", "content": "", "sections": {"extra": "Also be kind."}}
    messages: list[dict[str, Any]] = [
        system,
        {"role": "compactionSummary", "summary": "Earlier we did things."},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": [{"type": "text", "text": "first answer"}]},
        patch,
        {"role": "user", "content": [{"type": "text", "text": "edited question"}]},
    ]
    return Projection(
        leaf_id="u2",
        messages=messages,
        # The head compaction contributes two messages (checkpoint + summary).
        source_entry_ids=["c1", "c1", "u1", "a1", "s1", "u2"],
        context_entry_ids=["c1", "u1", "a1", "s1", "u2", "x1"],
        edits={"u2": "x1"},
    )


def test_count_projection_totals_and_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    estimator = TiktokenEstimator(CL100K)
    projection = hand_projection()
    total, per = estimator.count_projection(projection)
    assert per == [estimator.count(m) for m in projection.messages]
    system = projection.system_message
    assert system is not None
    non_system = sum(
        n for n, m in zip(per, projection.messages, strict=True) if m["role"] != "system"
    )
    assert total == estimator.count(system) + non_system
    # Both messages of the compaction entry are cached apart; the edit is part of the key.
    assert estimator.cached(("c1", None)) == per[0]
    assert estimator.cached(("c1#1", None)) == per[1]
    assert estimator.cached(("u2", "x1")) == per[5]
    assert estimator.cached(("u2", None)) is None

    calls = CountingEncoder(estimator, monkeypatch)
    assert estimator.count_projection(projection) == (total, per)
    assert calls.texts == []


def test_count_projection_after_append_encodes_only_the_new_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    estimator = TiktokenEstimator(O200K)
    projection = hand_projection()
    total, per = estimator.count_projection(projection)
    calls = CountingEncoder(estimator, monkeypatch)
    grown = projection.extended()
    grown.messages.append({"role": "user", "content": "one more thing"})
    grown.source_entry_ids.append("u3")
    grown.leaf_id = "u3"
    total2, per2 = estimator.count_projection(grown)
    assert calls.texts == ["one more thing"]
    assert per2[:-1] == per
    assert total2 == total + per2[-1]


def test_count_projection_on_a_store(tmp_path: Path) -> None:
    store = SessionStore.in_memory(str(tmp_path))
    store.append_message({"role": "system", "content": "You are pitui.", "toolsAdded": []})
    first = store.append_message({"role": "user", "content": "please fix <|endoftext|> bug"})
    store.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "On it."},
                {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"cmd": "ls"}},
            ],
        }
    )
    store.append_message(
        {"role": "toolResult", "toolCallId": "t1", "content": [{"type": "text", "text": "a b"}]}
    )
    store.append_compaction("We listed files.", first, 1234)
    store.append_message({"role": "user", "content": "thanks"})
    store.append_context_edit(first, {"content": "please fix the bug"})
    projection = store.project()
    assert projection.edits  # the edit reached the kept user message
    estimator = TiktokenEstimator(CL100K)
    total, per = estimator.count_projection(projection)
    assert per == [estimator.count(m) for m in projection.messages]
    system = projection.system_message
    assert system is not None
    assert total == estimator.count(system) + sum(
        n for n, m in zip(per, projection.messages, strict=True) if m["role"] != "system"
    )
    edited = projection.messages[projection.source_entry_ids.index(first)]
    assert edited["content"] == "please fix the bug"
