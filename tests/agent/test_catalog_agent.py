"""pi's AgentSession behaviour catalog (pi-reference.md §8 items 71–115), adapted to pi 1.6 and
pitui's API, against the scripted OpenAI-compatible server.

Summary requests (they carry the summarizer's system prompt) are answered by :class:`Router`
with a summary, so a test does not depend on how many summary requests a cut needs; the
agent's own requests get the replies queued in ``router.main``.

Skipped or adapted catalog items:
- 71/76: pitui has no after-compaction extension hook (pi's ``session_compact``) and the hook
  gets ``(preparation, reason, will_retry)`` with no ``branchEntries``; only the before-hook
  parts are tested.
- 82: pi 1.6 emits compaction events for manual compaction too (pi-1.6-vs-reference item 18),
  so the test checks that they are emitted with reason ``manual``.
- 83: about pi's mocked compaction module and ``agent.continue()`` timing (internals).
- 85: covered in its 1.6 form by test 88 (usage before the latest compaction is discarded).
- 86–88: pi 1.6 estimates the threshold from the projection; the tests build the history
  directly in the store and check the compaction made (or not) before the next prompt.
- 89–91 (fork) belong to the session tests; 102–112 are tree-selector UI internals; 114
  (model switch thinking entries) is not in this file's scope.
- 97: pi's ``aborted: true`` flag has no counterpart; ``cancelled`` is checked.
- 115: "prompt() waits for the retry while message_end handling is delayed" is about pi's
  event-handler plumbing and is not applicable.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from support.llm_server import (
    RecordedRequest,
    ScriptedLLMServer,
    Step,
    error,
    overflow,
    slow,
    text,
    tool_call,
)

from pitui.agent.compactor import CompactionFailed
from pitui.agent.events import AgentEvent, CompactionEnd, CompactionStart, RetryScheduled
from pitui.agent.extensions import (
    BranchSummaryResult,
    Cancel,
    ExtensionAPI,
    Extensions,
    Summary,
    TreePreparation,
)
from pitui.agent.navigation import NavigationError
from pitui.agent.session import AgentSession
from pitui.compaction import prompts
from pitui.compaction.prepare import CompactionPreparation
from pitui.config.settings import Settings
from pitui.session import SessionStore

SMALL = {"models": {"openai/test-model": {"contextWindow": 8192, "maxOutput": 1024}}}
SUMMARY = "## Goal\nFinish the catalog tests."

Message = dict[str, Any]


# --- helpers --------------------------------------------------------------------------------


def is_summary(request: RecordedRequest) -> bool:
    messages = request.messages
    return bool(messages) and messages[0].get("content") == prompts.SYSTEM_PROMPT


class Router:
    """Scripted for the whole test: summary requests get ``summaries`` (default: ``SUMMARY``),
    every other request the next of ``main`` (a 400 when none is queued)."""

    def __init__(self, llm: ScriptedLLMServer) -> None:
        self.main: deque[Step] = deque()
        self.summaries: deque[Step] = deque()
        llm.script(*([self] * 64))

    def __call__(self, request: RecordedRequest) -> Step:
        if is_summary(request):
            return self.summaries.popleft() if self.summaries else text(SUMMARY, usage=(50, 20))
        if self.main:
            return self.main.popleft()
        return error(400, "test: no main reply queued")


def make_agent(
    tmp_path: Path,
    llm: ScriptedLLMServer,
    *,
    extensions: Extensions | None = None,
    in_memory: bool = False,
    **extra: Any,
) -> AgentSession:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    settings = Settings.from_dict({**SMALL, "retry": {"baseDelayMs": 10}, **extra})
    store = (
        SessionStore.in_memory(str(project))
        if in_memory
        else SessionStore.create(tmp_path / "sessions", str(project))
    )
    return AgentSession(
        store,
        cwd=project,
        model="openai/test-model",
        api_base=f"{llm.url}/v1",
        settings=settings,
        extensions=extensions,
    )


def events_of(agent: AgentSession) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    return events


def compactions(store: SessionStore) -> list[dict[str, Any]]:
    return [store.data(n) for n in store.nodes() if n.type == "compaction"]


def summary_requests(llm: ScriptedLLMServer) -> list[RecordedRequest]:
    return [r for r in llm.requests if is_summary(r)]


def main_requests(llm: ScriptedLLMServer) -> list[RecordedRequest]:
    return [r for r in llm.requests if not is_summary(r)]


def user(text_: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text_}], "timestamp": 1}


def assistant(
    text_: str = "",
    *,
    usage: tuple[int, int] = (0, 0),
    stop: str = "stop",
    calls: list[tuple[str, dict[str, Any]]] | None = None,
) -> Message:
    content: list[dict[str, Any]] = [{"type": "text", "text": text_}] if text_ else []
    for i, (name, args) in enumerate(calls or []):
        content.append({"type": "toolCall", "id": f"tc{i}", "name": name, "arguments": args})
    message: Message = {
        "role": "assistant",
        "content": content,
        "api": "litellm",
        "provider": "openai",
        "model": "test-model",
        "usage": {
            "input": usage[0],
            "output": usage[1],
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": usage[0] + usage[1],
        },
        "stopReason": "toolUse" if calls else stop,
        "timestamp": 1,
    }
    if stop == "error":
        message["errorMessage"] = "529 overloaded"
    return message


def tool_result(call_id: str, name: str, text_: str) -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text_}],
        "isError": False,
        "timestamp": 1,
    }


async def two_prompts(agent: AgentSession, router: Router) -> None:
    router.main.extend([text("first answer", usage=(100, 10)), text("second answer")])
    assert (await agent.prompt("first question")).ok
    assert (await agent.prompt("second question")).ok


def file_entries(agent: AgentSession) -> list[dict[str, Any]]:
    path = agent.store.path
    assert path is not None
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def request_text(request: RecordedRequest) -> str:
    return "\n".join(content_text(m.get("content")) for m in request.messages)


# --- 71–82: compaction hooks and manual compaction -------------------------------------------


async def test_71_passive_extension_sees_one_preparation(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    calls: list[tuple[CompactionPreparation, str, bool]] = []

    def register(api: ExtensionAPI) -> None:
        api.on_before_compact(lambda p, r, w: calls.append((p, r, w)))

    ext = Extensions()
    ext.add("passive", register)
    agent = make_agent(tmp_path, llm, extensions=ext, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    result = await agent.compact()
    [(prep, reason, will_retry)] = calls
    assert isinstance(prep.messages_to_summarize, list) and prep.messages_to_summarize
    assert isinstance(prep.turn_prefix_messages, list)
    assert isinstance(prep.is_split_turn, bool)
    assert prep.tokens_before > 0
    assert reason == "manual" and will_retry is False
    entry = agent.store.get(result.entry_id)
    assert entry["summary"].startswith(SUMMARY) and entry["fromHook"] is False
    assert result.from_hook is False
    # pi 1.6 stores the summary requests' usage on the entry (summed for a split turn).
    requests = len(summary_requests(llm))
    assert requests == (2 if prep.is_split_turn else 1)
    assert entry["usage"]["input"] == 50 * requests
    history = summary_requests(llm)[0].messages[1]["content"]
    assert history.startswith("<conversation>\n") and "first question" in history
    if prep.is_split_turn:
        assert summary_requests(llm)[1].messages[1]["content"].startswith("# Conversation\n")


async def test_72_cancel_from_extension(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    ext = Extensions()
    ext.add("no", lambda api: api.on_before_compact(lambda p, r, w: Cancel()))
    agent = make_agent(tmp_path, llm, extensions=ext, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    count = len(agent.store)
    with pytest.raises(CompactionFailed, match=r"(?i)cancel") as info:
        await agent.compact()
    assert info.value.cancelled
    assert len(agent.store) == count and compactions(agent.store) == []
    assert summary_requests(llm) == []


async def test_73_77_custom_summary_from_extension_is_used_verbatim(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    custom = Summary("Custom summary from the extension.", tokens_before=999)
    ext = Extensions()
    ext.add("custom", lambda api: api.on_before_compact(lambda p, r, w: custom))
    agent = make_agent(tmp_path, llm, extensions=ext, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    result = await agent.compact()
    assert result.summary == "Custom summary from the extension."
    assert result.tokens_before == 999 and result.from_hook is True
    [entry] = compactions(agent.store)
    assert entry["summary"] == "Custom summary from the extension."
    assert entry["tokensBefore"] == 999 and entry["fromHook"] is True
    assert summary_requests(llm) == []


async def test_75_raising_hook_falls_back_to_default_compaction(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    def boom(prep: CompactionPreparation, reason: str, will_retry: bool) -> None:
        raise RuntimeError("extension bug")

    ext = Extensions()
    ext.add("broken", lambda api: api.on_before_compact(boom))
    agent = make_agent(tmp_path, llm, extensions=ext, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    result = await agent.compact()
    assert result.from_hook is False and result.summary.startswith(SUMMARY)
    assert len(compactions(agent.store)) == 1
    assert len(ext.errors) == 1 and "extension bug" in ext.errors[0]
    assert summary_requests(llm)


async def test_76_two_extensions_run_in_order(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    order: list[str] = []
    ext = Extensions()
    ext.add("one", lambda api: api.on_before_compact(lambda p, r, w: order.append("before1")))
    ext.add("two", lambda api: api.on_before_compact(lambda p, r, w: order.append("before2")))
    agent = make_agent(tmp_path, llm, extensions=ext, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    await agent.compact()
    assert order == ["before1", "before2"]


async def test_78_79_after_compaction_context_starts_with_summary_and_prompts_work(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    result = await agent.compact()
    assert result.summary and result.tokens_before > 0
    roles = [m["role"] for m in agent.store.project().messages]
    assert roles[:2] == ["system", "compactionSummary"]
    router.main.append(text("third answer"))
    after = await agent.prompt("third question")
    assert after.ok and after.last_message is not None
    assert after.last_message["role"] == "assistant"
    assert after.last_message["content"][0]["text"] == "third answer"
    sent = request_text(main_requests(llm)[-1])
    assert SUMMARY in sent and "first question" not in sent and "third question" in sent


async def test_74_80_compaction_is_persisted_once(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    await agent.compact()
    entries = file_entries(agent)
    found = [e for e in entries if e["type"] == "compaction"]
    assert len(found) == 1
    [entry] = found
    assert isinstance(entry["firstKeptEntryId"], str)
    assert entry["firstKeptEntryId"] in {e["id"] for e in entries}
    assert entry["tokensBefore"] > 0


async def test_81_in_memory_session_compacts(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm, in_memory=True, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    await agent.compact()
    assert agent.store.path is None or not Path(agent.store.path).exists()
    assert len(compactions(agent.store)) == 1


async def test_82_manual_compaction_emits_events_with_reason_manual(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    events = events_of(agent)
    result = await agent.compact()
    marks = [e for e in events if isinstance(e, CompactionStart | CompactionEnd)]
    assert marks == [
        CompactionStart("manual"),
        CompactionEnd("manual", entry_id=result.entry_id, tokens_before=result.tokens_before),
    ]


async def test_model_override_reaches_the_preparation_settings(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    seen: list[CompactionPreparation] = []
    ext = Extensions()
    ext.add("spy", lambda api: api.on_before_compact(lambda p, r, w: seen.append(p)))
    compaction = {
        "keepRecentTokens": 100000,
        "modelOverrides": {"openai/test-model": {"keepRecentTokens": 1}},
    }
    agent = make_agent(tmp_path, llm, extensions=ext, compaction=compaction)
    router = Router(llm)
    await two_prompts(agent, router)
    await agent.compact()
    [prep] = seen
    # The override wins over the ordinary value; the reserve is clamped for the 8k window.
    assert prep.settings.keep_recent_tokens == 1 and prep.settings.reserve_tokens == 2048


async def test_invalid_compaction_setting_is_named_and_the_default_applies(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """A bad value is one warning naming the key and the type expected; compaction goes on
    with the default for that key (pitui: settings are checked where they are read)."""
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": "lots"})
    [warning] = agent.settings.warnings
    assert "compaction.keepRecentTokens" in warning and "expected `int" in warning
    assert agent.compactor.settings().keep_recent_tokens == 4096  # 20000 clamped to 8k / 2


async def test_transient_error_in_a_summary_request_is_retried(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    router.summaries.append(error(503, "Service temporarily overloaded"))
    result = await agent.compact()
    assert result.summary.startswith(SUMMARY)
    statuses = [r.step.status if r.step else None for r in summary_requests(llm)]
    assert statuses[0] == 503 and all(s == 200 for s in statuses[1:]) and len(statuses) >= 2


# --- 84, 86–88: overflow and threshold -------------------------------------------------------


async def test_84_second_overflow_gives_up_after_one_compaction(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1})
    router = Router(llm)
    await two_prompts(agent, router)
    events = events_of(agent)
    router.main.extend([overflow(), overflow()])
    result = await agent.prompt("a question that overflows")
    assert result.error is not None and result.error.kind == "overflow"
    assert "still too large after compacting once" in result.error.message
    assert len(compactions(agent.store)) == 1
    assert [e.reason for e in events if isinstance(e, CompactionStart)] == ["overflow"]
    assert len(main_requests(llm)) == 2 + 2
    # The second failure is stored as it is: no omission edit, no second compaction.
    last = agent.store.path_to()[-1]
    assert last.role == "assistant"
    assert agent.store.data(last)["message"]["stopReason"] == "error"


def _threshold_agent(tmp_path: Path, llm: ScriptedLLMServer) -> AgentSession:
    return make_agent(tmp_path, llm, compaction={"keepRecentTokens": 1})


async def test_86_error_after_huge_usage_compacts_before_the_next_prompt(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = _threshold_agent(tmp_path, llm)
    store = agent.store
    store.append_message(user("q1"))
    store.append_message(assistant("a1", usage=(7000, 100)))  # window 8192 - reserve 2048
    store.append_message(user("q2"))
    store.append_message(assistant(stop="error"))
    router = Router(llm)
    router.main.append(text("fresh answer"))
    events = events_of(agent)
    result = await agent.prompt("q3")
    assert result.ok
    assert [e.reason for e in events if isinstance(e, CompactionStart)] == ["threshold"]
    [entry] = compactions(store)
    assert entry["tokensBefore"] >= 7100
    # The compaction happened before the new prompt was added.
    path = [n.id for n in store.path_to()]
    q3 = next(n.id for n in store.path_to() if n.role == "user" and n.id not in path[:4])
    assert path.index(entry["id"]) < path.index(q3)
    assert len(main_requests(llm)) == 1 and SUMMARY in request_text(main_requests(llm)[0])


async def test_87_error_without_prior_usage_does_not_compact(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = _threshold_agent(tmp_path, llm)
    store = agent.store
    store.append_message(user("q1"))
    store.append_message(assistant(stop="error"))
    router = Router(llm)
    router.main.append(text("fresh answer"))
    events = events_of(agent)
    assert (await agent.prompt("q2")).ok
    assert not any(isinstance(e, CompactionStart) for e in events)
    assert compactions(store) == [] and summary_requests(llm) == []


async def test_88_usage_from_before_the_latest_compaction_is_stale(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = _threshold_agent(tmp_path, llm)
    store = agent.store
    q1 = store.append_message(user("q1"))
    store.append_message(assistant("a1", usage=(7000, 100)))
    store.append_compaction("Earlier summary.", q1, 7100, from_hook=True)
    store.append_message(user("q2"))
    store.append_message(assistant(stop="error"))
    router = Router(llm)
    router.main.append(text("fresh answer"))
    events = events_of(agent)
    assert (await agent.prompt("q3")).ok
    assert not any(isinstance(e, CompactionStart) for e in events)
    assert len(compactions(store)) == 1 and summary_requests(llm) == []


async def test_usage_before_a_context_edit_is_discarded(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    """pi 1.6 (estimateProjectedContextTokens): a context_edit after the usage's entry makes
    it unusable, so the small chars/4 estimate decides."""
    agent = _threshold_agent(tmp_path, llm)
    store = agent.store
    store.append_message(user("q1"))
    store.append_message(assistant("a1", usage=(7000, 100)))
    store.append_message(user("q2"))
    failed = store.append_message(assistant(stop="error"))
    store.append_context_edit(failed, None)
    router = Router(llm)
    router.main.append(text("fresh answer"))
    events = events_of(agent)
    assert (await agent.prompt("q3")).ok
    assert not any(isinstance(e, CompactionStart) for e in events)
    assert compactions(store) == []


# --- 92–101: tree navigation -----------------------------------------------------------------


def nav_agent(
    tmp_path: Path, llm: ScriptedLLMServer, extensions: Extensions | None = None
) -> tuple[AgentSession, dict[str, str]]:
    agent = make_agent(tmp_path, llm, extensions=extensions)
    store = agent.store
    ids = {
        "u1": store.append_message(user("First message")),
        "a1": store.append_message(assistant("First answer")),
        "u2": store.append_message(user("Second message")),
        "a2": store.append_message(assistant("Second answer")),
    }
    return agent, ids


async def test_92_root_user_target_gives_editor_text_and_no_leaf(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    count = len(agent.store)
    result = await agent.navigate(ids["u1"])
    assert result.editor_text == "First message" and not result.cancelled
    assert agent.store.leaf_id is None and len(agent.store) == count


async def test_93_assistant_target_becomes_the_leaf(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    result = await agent.navigate(ids["a1"])
    assert result.editor_text is None and agent.store.leaf_id == ids["a1"]


async def test_94_summary_at_root_user_is_a_new_root(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    Router(llm)
    result = await agent.navigate(ids["u1"], summarize=True)
    assert result.editor_text == "First message"
    assert result.summary_entry_id is not None
    entry = agent.store.get(result.summary_entry_id)
    assert entry["type"] == "branch_summary" and entry["summary"]
    assert entry["parentId"] is None
    assert entry["fromId"] == ids["a2"]  # pi 1.6: the leaf before the call
    assert agent.store.leaf_id == result.summary_entry_id
    assert len(summary_requests(llm)) == 1
    assert entry["usage"]["input"] == 50 and entry["usage"]["output"] == 20  # pi 1.6


async def test_95_summary_at_second_user_hangs_under_its_parent(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    Router(llm)
    result = await agent.navigate(ids["u2"], summarize=True)
    assert result.editor_text == "Second message" and result.summary_entry_id is not None
    entry = agent.store.get(result.summary_entry_id)
    assert entry["parentId"] == ids["a1"] and entry["fromId"] == ids["a2"]
    children = {n.id: n.type for n in agent.store.children(ids["a1"])}
    assert children == {ids["u2"]: "message", result.summary_entry_id: "branch_summary"}


async def test_96_summary_at_assistant_hangs_under_it(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    Router(llm)
    result = await agent.navigate(ids["a1"], summarize=True)
    assert result.editor_text is None and result.summary_entry_id is not None
    assert agent.store.get(result.summary_entry_id)["parentId"] == ids["a1"]
    assert agent.store.leaf_id == result.summary_entry_id


async def test_summary_towards_a_descendant_has_nothing_to_summarize(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    await agent.navigate(ids["a1"])
    count = len(agent.store)
    result = await agent.navigate(ids["a2"], summarize=True)
    assert result.summary_entry_id is None and agent.store.leaf_id == ids["a2"]
    assert len(agent.store) == count and llm.requests == []


async def test_97_abort_during_branch_summary_changes_nothing(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    router = Router(llm)
    router.summaries.append(slow(SUMMARY, delay_per_chunk=0.3, chunks=20))
    count, leaf = len(agent.store), agent.store.leaf_id
    task = asyncio.ensure_future(agent.navigate(ids["u1"], summarize=True))
    await asyncio.to_thread(llm.wait_for_requests, 1)
    await asyncio.sleep(0.1)
    agent.abort()
    result = await asyncio.wait_for(task, timeout=10)
    assert result.cancelled and result.summary_entry_id is None
    assert len(agent.store) == count and agent.store.leaf_id == leaf
    assert not any(n.type == "branch_summary" for n in agent.store.nodes())


async def test_98_navigation_without_summary_writes_nothing(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    count = len(agent.store)
    await agent.navigate(ids["u2"])
    assert len(agent.store) == count and agent.store.leaf_id == ids["a1"]
    assert not any(n.type == "branch_summary" for n in agent.store.nodes())
    assert llm.requests == []


async def test_99_navigating_to_the_current_leaf_is_a_no_op(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    count = len(agent.store)
    result = await agent.navigate(ids["a2"], summarize=True)
    assert result.already_here and not result.cancelled and result.summary_entry_id is None
    assert agent.store.leaf_id == ids["a2"] and len(agent.store) == count
    assert llm.requests == []


async def test_100_custom_instructions_are_additional_focus(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    router = Router(llm)
    router.summaries.append(text("Summary mentioning MARKER-42."))
    result = await agent.navigate(ids["a1"], summarize=True, instructions="Mention MARKER-42")
    [request] = summary_requests(llm)
    content = request.messages[1]["content"]
    assert "Additional focus: Mention MARKER-42" in content
    assert "<conversation>" in content and "Second message" in content
    assert result.summary_entry_id is not None
    assert "MARKER-42" in agent.store.get(result.summary_entry_id)["summary"]


async def test_101_leaving_a_side_branch_for_the_main_one(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    store = agent.store
    store.append_message(user("Start"))
    a1 = store.append_message(assistant("Started"))
    u2 = store.append_message(user("Main branch continue"))
    store.append_message(assistant("Main answer"))
    store.branch(a1)
    store.append_message(user("Side branch question"))
    side = store.append_message(assistant("Side branch answer"))
    Router(llm)
    result = await agent.navigate(u2, summarize=True)
    assert result.editor_text == "Main branch continue"
    assert result.summary_entry_id is not None
    entry = store.get(result.summary_entry_id)
    assert entry["summary"] and entry["parentId"] == a1 and entry["fromId"] == side
    [request] = summary_requests(llm)
    content = request.messages[1]["content"]
    assert "Side branch question" in content and "Started" not in content


async def test_before_tree_cancel_prevents_navigation(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    seen: list[TreePreparation] = []

    def cancel(prep: TreePreparation) -> Cancel:
        seen.append(prep)
        return Cancel()

    ext = Extensions()
    ext.add("guard", lambda api: api.on_before_tree(cancel))
    agent, ids = nav_agent(tmp_path, llm, ext)
    count = len(agent.store)
    result = await agent.navigate(ids["u2"], summarize=True)
    assert result.cancelled and agent.store.leaf_id == ids["a2"] and len(agent.store) == count
    [prep] = seen
    assert prep.target_id == ids["u2"] and prep.old_leaf_id == ids["a2"]
    assert prep.common_ancestor_id == ids["u2"]
    assert prep.entries_to_summarize == [ids["a2"]] and prep.user_wants_summary
    assert llm.requests == []


async def test_before_tree_summary_is_used_with_from_hook(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    ext = Extensions()
    ext.add(
        "writer",
        lambda api: api.on_before_tree(
            lambda prep: BranchSummaryResult("From the hook.", details={"note": 1})
        ),
    )
    agent, ids = nav_agent(tmp_path, llm, ext)
    result = await agent.navigate(ids["a1"], summarize=True)
    assert result.summary_entry_id is not None
    entry = agent.store.get(result.summary_entry_id)
    assert entry["summary"] == "From the hook." and entry["fromHook"] is True
    assert entry["details"] == {"note": 1} and entry["parentId"] == ids["a1"]
    # Without summarize the hook's summary is not used.
    await agent.navigate(ids["u2"])
    assert sum(1 for n in agent.store.nodes() if n.type == "branch_summary") == 1
    assert llm.requests == []


async def test_failed_branch_summary_raises_and_changes_nothing(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    router = Router(llm)
    router.summaries.append(error(400, "summarizer refused"))
    count = len(agent.store)
    with pytest.raises(NavigationError, match="summarizer refused"):
        await agent.navigate(ids["a1"], summarize=True)
    assert len(agent.store) == count and agent.store.leaf_id == ids["a2"]


async def test_navigation_labels(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    Router(llm)
    store = agent.store
    result = await agent.navigate(ids["a1"], summarize=True, label="explored")
    assert result.summary_entry_id is not None
    label = store.get(str(store.leaf_id))
    assert label["type"] == "label" and label["targetId"] == result.summary_entry_id
    assert store.label_of(result.summary_entry_id) == "explored"
    # Without a summary the label goes on the target; the leaf moves onto the label entry.
    await agent.navigate(ids["u2"], label="retry here")
    label = store.get(str(store.leaf_id))
    assert label["type"] == "label" and label["targetId"] == ids["u2"]
    assert label["parentId"] == ids["a1"]
    assert store.label_of(ids["u2"]) == "retry here"


async def test_branch_summary_has_preamble_and_file_lists(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent = make_agent(tmp_path, llm)
    store = agent.store
    store.append_message(user("Start"))
    a1 = store.append_message(assistant("Started"))
    store.append_message(user("Change the app"))
    store.append_message(
        assistant(calls=[("read", {"path": "notes.txt"}), ("edit", {"path": "src/app.py"})])
    )
    store.append_message(tool_result("tc0", "read", "notes"))
    store.append_message(tool_result("tc1", "edit", "edited"))
    store.append_message(assistant("Done."))
    Router(llm)
    result = await agent.navigate(a1, summarize=True)
    assert result.summary_entry_id is not None
    entry = store.get(result.summary_entry_id)
    summary = entry["summary"]
    assert summary.startswith(prompts.BRANCH_PREAMBLE + SUMMARY)
    assert summary.endswith(
        "\n\n<read-files>\nnotes.txt\n</read-files>\n\n<modified-files>\nsrc/app.py\n"
        "</modified-files>"
    )
    assert entry["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": ["src/app.py"]}
    assert entry["fromHook"] is False


async def test_branch_summary_reaches_the_model_as_user_summary(
    tmp_path: Path, llm: ScriptedLLMServer
) -> None:
    agent, ids = nav_agent(tmp_path, llm)
    router = Router(llm)
    result = await agent.navigate(ids["a1"], summarize=True)
    assert result.summary_entry_id is not None
    summary = agent.store.get(result.summary_entry_id)["summary"]
    router.main.append(text("Continuing."))
    assert (await agent.prompt("Go on")).ok
    sent = main_requests(llm)[-1].messages
    wrapped = [
        content_text(m["content"])
        for m in sent
        if m["role"] == "user" and "<summary>" in content_text(m["content"])
    ]
    assert len(wrapped) == 1
    [body] = wrapped
    assert f"<summary>\n{summary}" in body and body.endswith("</summary>")
    assert "Second message" not in json.dumps(sent)


# --- 113, 115: persistence order and retries -------------------------------------------------


@pytest.mark.slow
async def test_113_one_tool_round_persists_in_order(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm)
    router = Router(llm)
    router.main.extend([tool_call("bash", {"command": "echo hi"}), text("All done.")])
    assert (await agent.prompt("run it")).ok
    roles = [
        e["message"]["role"]
        for e in file_entries(agent)
        if e["type"] == "message" and e["message"]["role"] != "system"
    ]
    assert roles == ["user", "assistant", "toolResult", "assistant"]


async def test_115_transient_error_retried_once(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm)
    events = events_of(agent)
    llm.script(error(503, "Service temporarily overloaded"), text("Recovered."))
    result = await agent.prompt("hi")
    assert result.ok and len(llm.requests) == 2
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [1]


async def test_115_exhausted_retries_give_an_error(tmp_path: Path, llm: ScriptedLLMServer) -> None:
    agent = make_agent(tmp_path, llm, retry={"baseDelayMs": 10, "maxRetries": 2})
    events = events_of(agent)
    llm.script(*[error(503, "Service temporarily overloaded") for _ in range(3)])
    result = await agent.prompt("hi")
    assert result.error is not None and result.error.kind == "retryable"
    assert len(llm.requests) == 1 + 2
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [1, 2]
