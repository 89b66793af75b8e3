"""Property tests for the session store: random trees, truncated files, random bytes.

The reference projection below is written from the pi 1.6 docs (semantics §1, §2, §4 and
vs-reference item 8), not from ``pitui/session/projection.py``:

* selection: the latest compaction on the root→leaf path, then the path entries from its
  ``firstKeptEntryId`` up to it without system messages (nothing when the id is not found
  before it), then every entry after it;
* each selected entry contributes its messages (the head compaction gives its ``systemMessage``
  checkpoint and a ``compactionSummary``; older compactions give nothing);
* ``context_edit``s among the selected entries, latest wins: null omits every message of the
  target, a replacement replaces the content (a string becomes one text block for assistant
  and toolResult targets) of user/assistant/toolResult/custom messages only.
"""

from __future__ import annotations

import copy
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pitui.session import LEAF_MARKER_TYPE, SessionError, SessionFileError, SessionStore
from pitui.session.projection import Projection

BASE = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MS = timedelta(milliseconds=1)
BASE_TS = 1_700_000_000_000
PLAIN_ROLES = ("user", "assistant", "toolResult")
EDITABLE = frozenset({"user", "assistant", "toolResult", "custom"})
BLOCKY = frozenset({"assistant", "toolResult"})
THINKING = ("off", "minimal", "low", "medium", "high", "xhigh")
MODELS = (("anthropic", "claude-x"), ("openai", "gpt-y"), ("local", "tiny"))
SECTION_NAMES = ("preamble", "tools", "rules", "docs", "my-sec")
TOOL_NAMES = ("read", "write", "bash", "grep")


# ---------------------------------------------------------------------------------------------
# Reference implementation (from the docs)
# ---------------------------------------------------------------------------------------------


def fresh(value: Any) -> Any:
    """A deep copy: the store gets its own objects, so in-place changes would show."""
    return copy.deepcopy(value)


def iso_ms(value: Any) -> int:
    """Entry timestamp (ISO, as written by the store) → epoch milliseconds."""
    dt = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return (dt - EPOCH) // MS


def is_system_message(entry: dict[str, Any]) -> bool:
    message = entry.get("message")
    return (
        entry.get("type") == "message"
        and isinstance(message, dict)
        and message.get("role") == "system"
    )


def repaired(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("content") is None:
        if message.get("role") == "system":
            return {**message, "content": ""}
        if message.get("role") in PLAIN_ROLES:
            return {**message, "content": []}
    return message


def ref_messages(entry: dict[str, Any], head: bool) -> list[dict[str, Any]]:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return [repaired(message)] if isinstance(message, dict) else []
    if kind == "custom_message":
        out: dict[str, Any] = {
            "role": "custom",
            "customType": entry.get("customType"),
            "content": [] if entry.get("content") is None else entry.get("content"),
            "display": entry.get("display"),
            "timestamp": iso_ms(entry["timestamp"]),
        }
        if "details" in entry:
            out["details"] = entry["details"]
        return [out]
    if kind == "branch_summary":
        if not entry.get("summary"):
            return []
        return [
            {
                "role": "branchSummary",
                "summary": entry["summary"],
                "fromId": entry.get("fromId"),
                "timestamp": iso_ms(entry["timestamp"]),
            }
        ]
    if kind == "compaction" and head:
        result: list[dict[str, Any]] = []
        if isinstance(entry.get("systemMessage"), dict):
            result.append(repaired(entry["systemMessage"]))
        result.append(
            {
                "role": "compactionSummary",
                "summary": entry.get("summary"),
                "tokensBefore": entry.get("tokensBefore"),
                "timestamp": iso_ms(entry["timestamp"]),
            }
        )
        return result
    return []


def ref_replace(message: dict[str, Any], replacement: Any) -> dict[str, Any]:
    role = message.get("role")
    if role not in EDITABLE or not isinstance(replacement, dict):
        return message
    content = replacement.get("content")
    if not isinstance(content, str | list):
        return message
    if isinstance(content, str) and role in BLOCKY:
        content = [{"type": "text", "text": content}]
    return {**message, "content": content}


@dataclass
class RefProjection:
    messages: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    context_ids: list[str] = field(default_factory=list)
    model: dict[str, Any] | None = None
    thinking: str = "off"
    compaction_id: str | None = None
    edits: dict[str, str] = field(default_factory=dict)


def ref_project(path: list[dict[str, Any]]) -> RefProjection:
    """The projection of a root→leaf path of full entries, following the docs."""
    ref = RefProjection()
    for entry in path:  # model and thinking: the whole path, compactions ignored
        if entry["type"] == "model_change":
            ref.model = {"provider": entry.get("provider"), "modelId": entry.get("modelId")}
        elif entry["type"] == "message" and entry["message"].get("role") == "assistant":
            message = entry["message"]
            ref.model = {"provider": message.get("provider"), "modelId": message.get("model")}
        elif entry["type"] == "thinking_level_change":
            ref.thinking = entry["thinkingLevel"]
    compactions = [i for i, e in enumerate(path) if e["type"] == "compaction"]
    if compactions:
        at = compactions[-1]
        head = path[at]
        starts = [i for i in range(at) if path[i]["id"] == head.get("firstKeptEntryId")]
        kept = [] if not starts else [e for e in path[starts[0] : at] if not is_system_message(e)]
        selected = [head, *kept, *path[at + 1 :]]
        ref.compaction_id = head["id"]
    else:
        selected = list(path)
    latest: dict[str, dict[str, Any]] = {}
    for entry in selected:
        if entry["type"] == "context_edit":
            latest[entry["targetId"]] = entry
    for index, entry in enumerate(selected):
        ref.context_ids.append(entry["id"])
        produced = ref_messages(entry, compactions != [] and index == 0)
        edit = latest.get(entry["id"])
        if edit is not None and produced:
            ref.edits[entry["id"]] = edit["id"]
            if edit.get("replacement") is None:
                produced = []
            else:
                produced = [ref_replace(m, edit["replacement"]) for m in produced]
        for message in produced:
            ref.messages.append(message)
            ref.sources.append(entry["id"])
    return ref


def content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content] if content else []
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict)
            and b.get("type") == "text"
            and isinstance(b.get("text"), str)
            and b["text"]
        ]
    return []


def ref_replay(messages: list[dict[str, Any]]) -> tuple[str, list[Any], list[Any]] | None:
    """pi's getCurrentSystemMessage, as (content text, section items, tools) or None."""
    systems = [m for m in messages if m.get("role") == "system"]
    if not systems:
        return None
    texts: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[str, Any] = {}
    for message in systems:
        texts.extend(content_texts(message.get("content")))
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in message.get("toolsRemoved") or []:
            tools.pop(tool["name"], None)
        for tool in message.get("toolsAdded") or []:
            tools.pop(tool["name"], None)
            tools[tool["name"]] = tool
    return "\n\n".join(texts), list(sections.items()), list(tools.values())


def replay_of_checkpoint(message: Any) -> tuple[str, list[Any], list[Any]] | None:
    if message is None:
        return None
    assert message.get("role") == "system"
    text = "\n\n".join(content_texts(message.get("content")))
    return (
        text,
        list((message.get("sections") or {}).items()),
        list(message.get("toolsAdded") or []),
    )


def tool_results_follow_calls(messages: list[dict[str, Any]]) -> bool:
    seen: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    seen.add(block["id"])
        if message.get("role") == "toolResult" and message.get("toolCallId") not in seen:
            return False
    return True


def proj_tuple(p: Projection) -> tuple[Any, ...]:
    return (
        p.leaf_id,
        p.messages,
        p.source_entry_ids,
        p.context_entry_ids,
        p.model,
        p.thinking_level,
        p.compaction_id,
        p.edits,
    )


def ref_tuple(leaf: str | None, r: RefProjection) -> tuple[Any, ...]:
    return (
        leaf,
        r.messages,
        r.sources,
        r.context_ids,
        r.model,
        r.thinking,
        r.compaction_id,
        r.edits,
    )


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

ALPHABET = 'aZ0 .\n\t"\\/é€😀\u2028\x00'
texts = st.text(alphabet=ALPHABET, max_size=6)
nonempty_texts = st.text(alphabet=ALPHABET, min_size=1, max_size=6)
text_blocks = st.builds(lambda t: {"type": "text", "text": t}, texts)
image_block = st.just({"type": "image", "data": "aGk=", "mimeType": "image/png"})
user_content = st.one_of(texts, st.lists(st.one_of(text_blocks, image_block), max_size=2))
plain_content = st.one_of(texts, st.lists(text_blocks, max_size=2))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(texts, inner, max_size=2),
    max_leaves=4,
)

OPS = (
    ["user"] * 4
    + ["assistant"] * 4
    + ["system"] * 2
    + ["compaction"] * 3
    + ["context_edit"] * 3
    + ["branch"] * 3
    + ["raw_edit"] * 2
    + [
        "model",
        "thinking",
        "label",
        "custom",
        "custom_message",
        "branch_summary",
        "session_info",
        "usage",
        "raw_entry",
        "refused_edit",
        "reset_leaf",
        "reopen",
    ]
)


# ---------------------------------------------------------------------------------------------
# The harness: a store plus an independent shadow of what it should hold
# ---------------------------------------------------------------------------------------------


class Harness:
    def __init__(self, data: st.DataObject, folder: Path | None) -> None:
        self.data = data
        self.folder = folder
        self.store = (
            SessionStore.in_memory("/proj")
            if folder is None
            else SessionStore.create(folder, "/proj")
        )
        self.entries: dict[str, dict[str, Any]] = {}  # id → expected full entry, file order
        self.leaf: str | None = None
        self.labels: dict[str, str] = {}
        self.name: str | None = None
        self.calls: dict[str, list[str]] = {}  # assistant id → its toolCall ids
        self.results: dict[str, list[str]] = {}  # assistant id → its toolResult entry ids
        self.result_ids: set[str] = set()
        self.counter = 0

    # -- helpers -----------------------------------------------------------------------------

    def draw(self, strategy: st.SearchStrategy[Any]) -> Any:
        return self.data.draw(strategy)

    def ts(self) -> int:
        self.counter += 1
        return BASE_TS + self.counter

    def path(self, leaf: str | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cur = leaf
        while cur is not None:
            out.append(self.entries[cur])
            cur = self.entries[cur]["parentId"]
        out.reverse()
        return out

    def path_ids(self, leaf: str | None) -> list[str]:
        return [e["id"] for e in self.path(leaf)]

    def pick(self, ids: list[str]) -> str:
        return ids[self.draw(st.integers(0, len(ids) - 1))]

    def is_call_assistant(self, entry_id: str) -> bool:
        return bool(self.calls.get(entry_id))

    def record(self, new_id: str, kind: str, parent: str | None, /, **fields: Any) -> None:
        """Check the stored entry against what was asked for, then shadow it."""
        assert self.store.leaf_id == new_id
        stored = self.store.get(new_id)
        assert isinstance(stored["timestamp"], str)
        iso_ms(stored["timestamp"])
        expected = {
            "type": kind,
            "id": new_id,
            "parentId": parent,
            "timestamp": stored["timestamp"],
        }
        expected.update(fields)
        if kind == "compaction":
            checkpoint = stored.get("systemMessage")
            assert replay_of_checkpoint(checkpoint) == ref_replay(
                ref_project(self.path(parent)).messages
            )
            if checkpoint is not None:
                assert isinstance(checkpoint.get("timestamp"), int)
                expected["systemMessage"] = checkpoint
        assert stored == expected
        assert new_id not in self.entries
        self.entries[new_id] = copy.deepcopy(stored)
        self.leaf = new_id
        self.check_leaf()

    def check_leaf(self) -> None:
        """Projection at the current leaf (cached/incremental in the store) = reference."""
        assert self.store.leaf_id == self.leaf
        self.check_projection(self.store, self.leaf)

    def check_projection(self, store: SessionStore, leaf: str | None) -> Projection:
        projection = store.project(leaf)
        path = self.path(leaf)
        ref = ref_project(path)
        assert proj_tuple(projection) == ref_tuple(leaf, ref)
        # (b) a tool result never precedes its call
        assert tool_results_follow_calls(projection.messages)
        # (c) one source id per message, each on the path (the head compaction is on it too)
        on_path = {e["id"] for e in path}
        assert len(projection.source_entry_ids) == len(projection.messages)
        assert set(projection.source_entry_ids) <= on_path
        assert set(projection.context_entry_ids) <= on_path
        return projection

    # -- operations --------------------------------------------------------------------------

    def op_user(self) -> None:
        message = {"role": "user", "content": self.draw(user_content), "timestamp": self.ts()}
        parent = self.leaf
        self.record(self.store.append_message(fresh(message)), "message", parent, message=message)

    def op_assistant(self) -> None:
        n_calls = self.draw(st.integers(0, 2))
        call_ids = []
        content: list[dict[str, Any]] = []
        if self.draw(st.booleans()):
            content.append({"type": "thinking", "thinking": self.draw(texts)})
        if self.draw(st.booleans()) or n_calls == 0:
            content.append({"type": "text", "text": self.draw(texts)})
        for _ in range(n_calls):
            self.counter += 1
            call_id = f"call_{self.counter}"
            call_ids.append(call_id)
            content.append(
                {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a"}}
            )
        provider, model = self.draw(st.sampled_from(MODELS))
        message = {
            "role": "assistant",
            "content": content,
            "api": "test",
            "provider": provider,
            "model": model,
            "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3},
            "stopReason": "toolUse" if call_ids else "stop",
            "timestamp": self.ts(),
        }
        parent = self.leaf
        assistant_id = self.store.append_message(fresh(message))
        self.record(assistant_id, "message", parent, message=message)
        self.calls[assistant_id] = call_ids
        self.results[assistant_id] = []
        for call_id in call_ids[: self.draw(st.integers(0, len(call_ids)))]:
            result = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "read",
                "content": self.draw(st.lists(text_blocks, max_size=2)),
                "isError": self.draw(st.booleans()),
                "timestamp": self.ts(),
            }
            parent = self.leaf
            result_id = self.store.append_message(fresh(result))
            self.record(result_id, "message", parent, message=result)
            self.results[assistant_id].append(result_id)
            self.result_ids.add(result_id)

    def op_system(self) -> None:
        message: dict[str, Any] = {
            "role": "system",
            "content": self.draw(st.one_of(st.just(""), texts, st.lists(text_blocks, max_size=2))),
        }
        if self.draw(st.booleans()):
            message["sections"] = self.draw(
                st.dictionaries(st.sampled_from(SECTION_NAMES), st.none() | texts, max_size=3)
            )
        added = self.draw(st.lists(st.sampled_from(TOOL_NAMES), unique=True, max_size=2))
        removed = self.draw(st.lists(st.sampled_from(TOOL_NAMES), unique=True, max_size=2))
        if added:
            message["toolsAdded"] = [
                {"name": n, "description": self.draw(texts), "parameters": {}} for n in added
            ]
        # A redefinition is always a removal plus an addition, as pi writes it.
        removed = sorted(set(removed) | set(added))
        if removed:
            message["toolsRemoved"] = [{"name": n} for n in removed]
        message["timestamp"] = self.ts()
        parent = self.leaf
        self.record(self.store.append_message(fresh(message)), "message", parent, message=message)

    def op_model(self) -> None:
        provider, model = self.draw(st.sampled_from(MODELS))
        parent = self.leaf
        new_id = self.store.append_model_change(provider, model)
        self.record(new_id, "model_change", parent, provider=provider, modelId=model)

    def op_thinking(self) -> None:
        level = self.draw(st.sampled_from(THINKING))
        parent = self.leaf
        new_id = self.store.append_thinking_level_change(level)
        self.record(new_id, "thinking_level_change", parent, thinkingLevel=level)

    def op_label(self) -> None:
        if not self.entries:
            return
        target = self.pick(list(self.entries))
        label = self.draw(st.one_of(st.none(), st.just(""), nonempty_texts))
        parent = self.leaf
        new_id = self.store.append_label(target, label)
        fields: dict[str, Any] = {"targetId": target}
        if label is not None:
            fields["label"] = label
        self.record(new_id, "label", parent, **fields)
        if label:
            self.labels[target] = label
        else:
            self.labels.pop(target, None)

    def op_custom(self) -> None:
        custom_type = self.draw(st.sampled_from(["ext.a", "ext.b"]))
        value = self.draw(json_values)
        parent = self.leaf
        new_id = self.store.append_custom(custom_type, fresh(value))
        fields: dict[str, Any] = {"customType": custom_type}
        if value is not None:
            fields["data"] = value
        self.record(new_id, "custom", parent, **fields)

    def op_custom_message(self) -> None:
        custom_type = self.draw(st.sampled_from(["note", "hint"]))
        content = self.draw(user_content)
        display = self.draw(st.booleans())
        details = self.draw(st.none() | json_values)
        parent = self.leaf
        new_id = self.store.append_custom_message(
            custom_type, fresh(content), display, fresh(details)
        )
        fields: dict[str, Any] = {"customType": custom_type, "content": content, "display": display}
        if details is not None:
            fields["details"] = details
        self.record(new_id, "custom_message", parent, **fields)

    def op_branch_summary(self) -> None:
        ids = list(self.entries)
        parent = None if not ids or self.draw(st.integers(0, 4)) == 0 else self.pick(ids)
        summary = self.draw(st.one_of(st.just(""), nonempty_texts))
        details = self.draw(st.none() | st.just({"readFiles": [], "modifiedFiles": ["x"]}))
        from_id = self.leaf if self.leaf is not None else "root"
        new_id = self.store.branch_with_summary(parent, summary, fresh(details))
        fields: dict[str, Any] = {"fromId": from_id, "summary": summary}
        if details is not None:
            fields["details"] = details
        fields["fromHook"] = False
        self.record(new_id, "branch_summary", parent, **fields)

    def op_session_info(self) -> None:
        name = self.draw(st.text(alphabet="ab \r\n", max_size=6))
        parent = self.leaf
        new_id = self.store.append_session_info(name)
        stored = re.sub(r"[\r\n]+", " ", name).strip()
        self.record(new_id, "session_info", parent, name=stored)
        self.name = stored or None

    def op_usage(self) -> None:
        note = self.draw(st.sampled_from([None, "", "warm"]))
        usage = {"input": 3, "output": 4}
        parent = self.leaf
        new_id = self.store.append_usage("cache_warm", "anthropic", "claude-x", fresh(usage), note)
        fields: dict[str, Any] = {
            "kind": "cache_warm",
            "provider": "anthropic",
            "model": "claude-x",
            "usage": usage,
        }
        if note:
            fields["note"] = note
        self.record(new_id, "usage", parent, **fields)

    def op_compaction(self) -> None:
        path_ids = self.path_ids(self.leaf)
        on_path = set(path_ids)
        # Never cut at a tool result: pi's cut points never are one (and it would orphan the
        # result from its call).
        keepable = [i for i in path_ids if i not in self.result_ids]
        elsewhere = [i for i in self.entries if i not in on_path]
        choice = self.draw(st.integers(0, 9))
        first_kept: str | None
        if choice <= 1:
            first_kept = None
        elif choice == 2 and elsewhere:
            first_kept = self.pick(elsewhere)
        elif choice == 3:
            first_kept = "nosuchid"
        elif keepable:
            first_kept = self.pick(keepable)
        else:
            first_kept = None
        summary = self.draw(texts)
        tokens = self.draw(st.integers(0, 10_000))
        details = self.draw(st.none() | st.just({"readFiles": ["a"], "modifiedFiles": []}))
        parent = self.leaf
        new_id = self.store.append_compaction(summary, first_kept, tokens, fresh(details))
        fields: dict[str, Any] = {
            "summary": summary,
            "firstKeptEntryId": first_kept if first_kept is not None else new_id,
            "tokensBefore": tokens,
        }
        if details is not None:
            fields["details"] = details
        fields["fromHook"] = False
        self.record(new_id, "compaction", parent, **fields)

    def editable_on_path(self) -> list[str]:
        out = []
        for entry in self.path(self.leaf):
            if entry["type"] == "custom_message" or (
                entry["type"] == "message" and entry["message"].get("role") in PLAIN_ROLES
            ):
                out.append(entry["id"])
        return out

    def call_visible(self, result_id: str) -> bool:
        """Whether the call of tool result ``result_id`` is in the context at the leaf."""
        call_id = self.entries[result_id]["message"]["toolCallId"]
        return any(
            isinstance(block, dict) and block.get("type") == "toolCall" and block["id"] == call_id
            for message in ref_project(self.path(self.leaf)).messages
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
        )

    def append_edit(self, target: str, replacement: dict[str, Any] | None) -> None:
        role = self.entries[target].get("message", {}).get("role")
        stored = replacement
        if replacement is not None and role in BLOCKY and isinstance(replacement["content"], str):
            stored = {"content": [{"type": "text", "text": replacement["content"]}]}
        parent = self.leaf
        new_id = self.store.append_context_edit(target, fresh(replacement))
        self.record(new_id, "context_edit", parent, targetId=target, replacement=stored)

    def op_context_edit(self) -> None:
        targets = self.editable_on_path()
        if not targets:
            return
        target = self.pick(targets)
        replacement = self.draw(
            st.none() | st.builds(lambda c: {"content": c}, st.one_of(texts, user_content))
        )
        if replacement is not None and target in self.result_ids and not self.call_visible(target):
            replacement = None  # never bring back a result whose call was edited away
        if (
            replacement is not None
            and self.entries[target].get("message", {}).get("role") in BLOCKY
            and isinstance(replacement["content"], list)
        ):
            replacement = {"content": [b for b in replacement["content"] if b["type"] == "text"]}
        if self.is_call_assistant(target):
            # The call goes away: its results go with it (as pi's omit recovery does). The
            # results go first so that no entry on the way shows a result without its call.
            on_path = set(self.path_ids(self.leaf))
            for result_id in self.results[target]:
                if result_id in on_path:
                    self.append_edit(result_id, None)
        self.append_edit(target, replacement)

    def op_raw_edit(self) -> None:
        """A hand-written context_edit: any target on the path, no write-time normalization."""
        path_ids = [i for i in self.path_ids(self.leaf) if not self.is_call_assistant(i)]
        editable = [i for i in self.editable_on_path() if not self.is_call_assistant(i)]
        choice = self.draw(st.integers(0, 5))
        if choice == 0 or not path_ids:
            target = "nosuchid"
        elif choice <= 3 and editable:
            target = self.pick(editable)
        else:
            target = self.pick(path_ids)
        replacement = self.draw(
            st.none() | st.builds(lambda c: {"content": c}, st.one_of(texts, st.lists(text_blocks)))
        )
        if replacement is not None and target in self.result_ids and not self.call_visible(target):
            replacement = None  # never bring back a result whose call was edited away
        entry = {"type": "context_edit", "targetId": target, "replacement": replacement}
        parent = self.leaf
        new_id = self.store.append_entry(fresh(entry))
        self.record(new_id, "context_edit", parent, targetId=target, replacement=replacement)

    def op_raw_entry(self) -> None:
        """Pre-built entries: null contents (repaired at projection), bash, unknown types."""
        variant = self.draw(st.integers(0, 5))
        entry: dict[str, Any]
        if variant <= 2:
            role = ["user", "assistant", "system"][variant]
            message: dict[str, Any] = {"role": role, "content": None, "timestamp": self.ts()}
            if role == "assistant":
                message.update(provider="local", model="tiny", stopReason="aborted")
            entry = {"type": "message", "message": message}
        elif variant == 3:
            entry = {"type": "custom_message", "customType": "n", "content": None, "display": True}
        elif variant == 4:
            bash = {
                "role": "bashExecution",
                "command": "ls",
                "output": "x",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": self.ts(),
            }
            entry = {"type": "message", "message": bash}
        else:
            entry = {"type": "future_thing", "payload": self.draw(json_values)}
        parent = self.leaf
        new_id = self.store.append_entry(fresh(entry))
        fields = {k: v for k, v in entry.items() if k != "type"}
        self.record(new_id, entry["type"], parent, **fields)

    def op_refused_edit(self) -> None:
        """Edits the store must refuse leave the session unchanged."""
        on_path = set(self.path_ids(self.leaf))
        refusable = [
            i
            for i, e in self.entries.items()
            if i not in on_path
            or e["type"] not in ("message", "custom_message")
            or (e["type"] == "message" and e["message"].get("role") not in PLAIN_ROLES)
        ]
        if not refusable:
            return
        target = self.pick(refusable)
        before = (self.store.leaf_id, len(self.store))
        with pytest.raises(SessionError):
            self.store.append_context_edit(target, None)
        assert (self.store.leaf_id, len(self.store)) == before

    def op_branch(self) -> None:
        if not self.entries:
            return
        target = self.pick(list(self.entries))
        self.store.branch(target)
        self.leaf = target
        self.check_leaf()

    def op_reset_leaf(self) -> None:
        self.store.reset_leaf()
        self.leaf = None
        self.check_leaf()

    def op_reopen(self) -> None:
        if self.folder is None or not self.store.persisted:
            return
        path = self.store.path
        assert path is not None
        self.store.close()
        self.store = SessionStore.open(path)
        assert self.store.warnings == []
        assert self.store.leaf_id == self.leaf
        self.check_leaf()

    # -- final checks ------------------------------------------------------------------------

    def expect_persisted(self) -> bool:
        return any(
            e["type"] == "message" and e["message"].get("role") in ("user", "assistant")
            for e in self.entries.values()
        )

    def check_all(self) -> None:
        store = self.store
        ids = list(self.entries)
        assert [n.id for n in store.nodes()] == ids
        assert len(store) == len(ids)
        assert store.labels == self.labels
        assert store.session_name == self.name
        for entry_id in ids:
            assert store.get(entry_id) == self.entries[entry_id]
        # (e) + (b) + (c) at every leaf, through whatever the store has cached
        live = {leaf: proj_tuple(self.check_projection(store, leaf)) for leaf in [None, *ids]}
        # (f) tree(): every entry exactly once, under its parent, in timestamp/file order
        tree = store.tree()
        listed = [child for children in tree.values() for child in children]
        assert sorted(listed) == sorted(ids)
        position = {entry_id: i for i, entry_id in enumerate(ids)}
        for parent, children in tree.items():
            for child in children:
                expected_parent = self.entries[child]["parentId"]
                assert parent == ("null" if expected_parent is None else expected_parent)
            if parent != "null":
                keys = [(iso_ms(self.entries[c]["timestamp"]), position[c]) for c in children]
                assert keys == sorted(keys)
            else:
                assert [position[c] for c in children] == sorted(position[c] for c in children)
        # A fresh store (nothing cached) from a copy gives the same answers.
        with tempfile.TemporaryDirectory() as tmp:
            copy_path = Path(tmp) / "copy.jsonl"
            store.save_copy(copy_path)
            fresh = SessionStore.open(copy_path, read_only=True)
            assert fresh.warnings == []
            for entry_id in ids:
                assert fresh.get(entry_id) == self.entries[entry_id]
            for leaf in ids:
                assert proj_tuple(fresh.project(leaf)) == live[leaf]
            self.check_child_extends_parent(fresh)
            fresh.close()
        if self.folder is not None:
            self.check_disk(live)

    def check_child_extends_parent(self, store: SessionStore) -> None:
        """(a) a plain message child projects as its parent plus its own message."""
        for entry_id, entry in self.entries.items():
            message = entry.get("message")
            if not isinstance(message, dict) or message.get("role") not in PLAIN_ROLES:
                continue
            parent = entry["parentId"]
            base = store.project(parent)
            child = store.project(entry_id)
            assert child.messages == [*base.messages, repaired(message)]
            assert child.source_entry_ids == [*base.source_entry_ids, entry_id]

    def check_disk(self, live: dict[str | None, tuple[Any, ...]]) -> None:
        """(d) close, reopen: same entries, same leaf, same projections at every leaf."""
        path = self.store.path
        assert path is not None
        persisted = self.expect_persisted()
        assert self.store.persisted == persisted
        assert path.exists() == persisted
        self.store.close()
        if not persisted:
            return
        reopened = SessionStore.open(path)
        try:
            assert reopened.warnings == []
            assert reopened.leaf_id == self.leaf
            assert [n.id for n in reopened.nodes()] == list(self.entries)
            assert reopened.labels == self.labels
            assert reopened.session_name == self.name
            for leaf, expected in live.items():
                assert proj_tuple(reopened.project(leaf)) == expected
        finally:
            reopened.close()


def run_ops(harness: Harness, max_ops: int) -> None:
    n_ops = harness.draw(st.integers(1, max_ops))
    for _ in range(n_ops):
        op = harness.draw(st.sampled_from(OPS))
        getattr(harness, f"op_{op}")()


@settings(BASE, max_examples=300)
@given(st.data())
def test_random_trees_in_memory(data: st.DataObject) -> None:
    harness = Harness(data, None)
    run_ops(harness, 50)
    harness.check_all()


@settings(BASE, max_examples=150)
@given(st.data())
def test_random_trees_on_disk(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        harness = Harness(data, Path(tmp))
        try:
            run_ops(harness, 40)
            harness.check_all()
        finally:
            harness.store.close()


# ---------------------------------------------------------------------------------------------
# 2. Truncated files
# ---------------------------------------------------------------------------------------------


def build_sample(folder: Path, rounds: int) -> bytes:
    """A valid session file made through the store: branches, edits, a compaction, a marker."""
    store = SessionStore.create(folder, "/proj")
    store.append_model_change("anthropic", "claude-x")
    store.append_thinking_level_change("low")
    store.append_message({"role": "system", "content": "", "sections": {"preamble": "Be nice."}})
    first = ""
    for i in range(rounds):
        user = store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"héllo {i} 😀"}], "timestamp": i}
        )
        first = first or user
        store.append_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "sure\n€"},
                    {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"p": "a"}},
                ],
                "provider": "anthropic",
                "model": "claude-x",
                "stopReason": "toolUse",
                "timestamp": i,
            }
        )
        store.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{i}",
                "toolName": "read",
                "content": [{"type": "text", "text": "x" * i}],
                "isError": False,
                "timestamp": i,
            }
        )
        if i % 3 == 1:
            store.append_label(user, f"mark {i}")
            store.append_context_edit(user, {"content": "edited ✓"})
        if i % 4 == 2:
            store.append_compaction(f"summary {i}", user, 1000 + i)
            store.append_custom_message("note", "a note", True)
            store.branch(user)
            store.branch_with_summary(user, "went back")
    store.branch(first)  # the leaf moved without an append: close writes a leaf marker
    path = store.path
    assert path is not None
    store.close()
    return path.read_bytes()


_SAMPLES: dict[int, bytes] = {}


def sample(rounds: int) -> bytes:
    if rounds not in _SAMPLES:
        with tempfile.TemporaryDirectory() as tmp:
            _SAMPLES[rounds] = build_sample(Path(tmp), rounds)
    return _SAMPLES[rounds]


def is_marker(entry: dict[str, Any]) -> bool:
    return entry.get("type") == "custom" and entry.get("customType") == LEAF_MARKER_TYPE


def check_truncated(data: bytes, n: int, folder: Path) -> None:
    """Open ``data[:n]``, append one user message, reopen: nothing complete is lost."""
    prefix = data[:n]
    path = folder / f"cut-{n}.jsonl"
    path.write_bytes(prefix)
    header_len = data.index(b"\n")
    try:
        if 0 < n < header_len:
            with pytest.raises(SessionFileError):
                SessionStore.open(path)
            assert path.read_bytes() == prefix  # refused files are left alone
            return
        complete = prefix[: prefix.rfind(b"\n") + 1]
        tail = prefix[len(complete) :]
        lines = [orjson.loads(line) for line in complete.split(b"\n")[:-1]]
        tail_obj: Any = None
        if tail:
            try:
                tail_obj = orjson.loads(tail)
            except orjson.JSONDecodeError:
                tail_obj = None
        all_objs = [*lines, *([tail_obj] if tail_obj is not None else [])]
        entries = [o for o in all_objs if o.get("type") != "session"]
        torn = bool(tail) and tail_obj is None

        store = SessionStore.open(path)
        try:
            assert path.read_bytes() == prefix  # opening never writes
            for entry in entries:  # every complete line is there as an entry
                assert store.find(entry["id"]) == entry
            assert [n.id for n in store.nodes()] == [e["id"] for e in entries if not is_marker(e)]
            if torn:
                assert [w.line for w in store.warnings] == [len(lines) + 1]
            else:
                assert store.warnings == []
            last = entries[-1] if entries else None
            expected_leaf = None
            if last is not None:
                expected_leaf = last["parentId"] if is_marker(last) else last["id"]
            assert store.leaf_id == expected_leaf
            new_id = store.append_message({"role": "user", "content": "after", "timestamp": 1})
            assert store.get(new_id)["parentId"] == expected_leaf
        finally:
            store.close()

        after = path.read_bytes()
        sides = sorted(folder.glob(path.name + ".torn-*"))
        if torn:
            assert [s.read_bytes() for s in sides] == [tail]
            kept = complete
        else:
            assert sides == []
            kept = complete + tail + b"\n" if tail else complete
        if n == 0:
            kept = after[: after.index(b"\n") + 1]  # a new header
            assert orjson.loads(kept)["type"] == "session"
        assert after.startswith(kept)
        new_line = after[len(kept) :]
        assert new_line.endswith(b"\n") and new_line.count(b"\n") == 1
        assert orjson.loads(new_line)["id"] == new_id

        reopened = SessionStore.open(path, read_only=True)
        try:
            assert reopened.warnings == []
            expected_ids = [e["id"] for e in entries if not is_marker(e)] + [new_id]
            assert [node.id for node in reopened.nodes()] == expected_ids
            for entry in entries:
                assert reopened.find(entry["id"]) == entry
            assert reopened.leaf_id == new_id
        finally:
            reopened.close()
    finally:
        for leftover in folder.glob(path.name + "*"):
            leftover.unlink()


def line_boundaries(data: bytes) -> list[int]:
    return [i + 1 for i, byte in enumerate(data) if byte == 0x0A]


@settings(BASE, max_examples=250)
@given(st.data())
def test_truncated_file_at_any_offset(data: st.DataObject) -> None:
    blob = sample(12)
    bounds = line_boundaries(blob)
    near_boundary = st.builds(
        lambda b, d: min(max(b + d, 0), len(blob)), st.sampled_from(bounds), st.integers(-3, 3)
    )
    n = data.draw(st.one_of(st.integers(0, len(blob)), near_boundary), label="offset")
    with tempfile.TemporaryDirectory() as tmp:
        check_truncated(blob, n, Path(tmp))


def test_truncated_small_file_at_every_offset() -> None:
    blob = sample(1)
    assert blob.count(b"\n") > 5
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(len(blob) + 1):
            check_truncated(blob, n, Path(tmp))


# ---------------------------------------------------------------------------------------------
# 3. Random bytes and random JSON-ish lines after a valid header
# ---------------------------------------------------------------------------------------------

HEADER = (
    b'{"type":"session","version":3,"id":"prop-test","timestamp":"2025-01-01T00:00:00.000Z",'
    b'"cwd":"/proj"}\n'
)


def check_survives(body: bytes, folder: Path) -> None:
    """Open header + ``body``: only warnings; every view works; an append lands cleanly."""
    path = folder / "random.jsonl"
    original = HEADER + body
    path.write_bytes(original)
    started = time.monotonic()
    store = SessionStore.open(path)
    try:
        visible = [node.id for node in store.nodes()]
        assert len(set(visible)) == len(visible)
        tree = store.tree()
        listed = [child for children in tree.values() for child in children]
        assert sorted(listed) == sorted(visible)  # (f) on arbitrary files
        objects: dict[str, Any] = {}
        for entry_id in [None, *visible]:
            path_ids = {node.id for node in store.path_to(entry_id)}
            projection = store.project(entry_id)
            assert len(projection.source_entry_ids) == len(projection.messages)
            assert set(projection.source_entry_ids) <= path_ids
            if entry_id is not None:
                objects[entry_id] = store.get(entry_id)
                assert isinstance(objects[entry_id], dict)
        store.labels  # noqa: B018
        store.session_name  # noqa: B018
        new_id = store.append_message({"role": "user", "content": "hi", "timestamp": 1})
    finally:
        store.close()
    after = path.read_bytes()
    sides = list(folder.glob(path.name + ".torn-*"))
    new_line = after[after.rstrip(b"\n").rfind(b"\n") + 1 :]
    kept = after[: len(after) - len(new_line)]
    assert orjson.loads(new_line)["id"] == new_id
    if sides:
        assert len(sides) == 1
        assert kept + sides[0].read_bytes() == original
    else:
        assert kept in (original, original + b"\n")
    reopened = SessionStore.open(path, read_only=True)
    try:
        assert reopened.leaf_id == new_id
        new_line_no = reopened.node(new_id).line
        assert all(w.line != new_line_no for w in reopened.warnings)
        # Nothing that was readable before the append is lost by it.
        assert sorted(node.id for node in reopened.nodes()) == sorted([*visible, new_id])
        for entry_id, obj in objects.items():
            assert reopened.get(entry_id) == obj
    finally:
        reopened.close()
    assert time.monotonic() - started < 5.0


@settings(BASE, max_examples=300)
@given(st.binary(max_size=400))
def test_random_bytes_after_header(body: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_survives(body, Path(tmp))


IDS = st.sampled_from(["a", "b", "c", "d", "e"])
ENTRY_TYPES = st.sampled_from(
    [
        "message",
        "compaction",
        "context_edit",
        "label",
        "session_info",
        "custom",
        "custom_message",
        "branch_summary",
        "model_change",
        "thinking_level_change",
        "usage",
        "session",
        "weird",
    ]
)
ROLES = st.sampled_from(["user", "assistant", "toolResult", "system", "custom", "bashExecution"])
TIMESTAMPS = st.sampled_from(
    ["2025-01-01T00:00:00.000Z", "2025-01-01T00:00:01Z", "2024-02-30T00:00:00Z", "soon", ""]
)
odd = st.one_of(json_values, st.integers(), st.floats(allow_nan=False, allow_infinity=False))
message_objects = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(ROLES, odd),
        "content": st.one_of(plain_content, odd, st.none()),
        "provider": st.one_of(st.sampled_from(["p"]), odd),
        "model": odd,
        "toolCallId": odd,
        "sections": st.one_of(
            st.dictionaries(st.sampled_from(SECTION_NAMES), st.none() | texts), odd
        ),
        "toolsAdded": st.one_of(st.lists(st.fixed_dictionaries({"name": texts})), odd),
        "toolsRemoved": st.one_of(st.lists(st.fixed_dictionaries({"name": texts})), odd),
    },
)
entry_objects = st.fixed_dictionaries(
    {"type": st.one_of(ENTRY_TYPES, odd), "id": st.one_of(IDS, IDS, odd)},
    optional={
        "parentId": st.one_of(IDS, st.none(), odd),
        "timestamp": st.one_of(TIMESTAMPS, odd),
        "message": st.one_of(message_objects, message_objects, odd),
        "firstKeptEntryId": st.one_of(IDS, odd),
        "targetId": st.one_of(IDS, odd),
        "replacement": st.one_of(
            st.none(), st.fixed_dictionaries({"content": st.one_of(plain_content, odd)}), odd
        ),
        "label": odd,
        "name": odd,
        "summary": odd,
        "tokensBefore": odd,
        "systemMessage": st.one_of(message_objects, odd),
        "content": st.one_of(plain_content, odd),
        "display": odd,
        "thinkingLevel": st.one_of(st.sampled_from(THINKING), odd),
        "customType": st.one_of(st.just(LEAF_MARKER_TYPE), odd),
        "fromId": odd,
        "details": odd,
        "modelId": odd,
    },
)


@st.composite
def jsonish_lines(draw: st.DrawFn) -> bytes:
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 12))):
        obj = draw(entry_objects)
        line = json.dumps(obj, separators=(",", ":"), ensure_ascii=draw(st.booleans())).encode()
        mutation = draw(st.integers(0, 9))
        if mutation == 0:
            line = line[: draw(st.integers(0, len(line)))]
        elif mutation == 1:
            at = draw(st.integers(0, len(line)))
            line = line[:at] + draw(st.binary(min_size=1, max_size=3)) + line[at:]
        elif mutation == 2:
            line = draw(st.sampled_from([b"", b"  ", b"\r", b"null", b"{}", b'"s"', b'{"id":1}']))
        lines.append(line)
    body = b"\n".join(lines)
    if draw(st.booleans()) and lines:
        body += b"\n"
    return body


@settings(BASE, max_examples=400)
@given(jsonish_lines())
def test_random_jsonish_lines_after_header(body: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check_survives(body, Path(tmp))


# ---------------------------------------------------------------------------------------------
# Regressions: loader bugs the properties above found (fixed in pitui/session since)
# ---------------------------------------------------------------------------------------------


def _write(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(HEADER + body)
    return path


@pytest.mark.parametrize("line", [b"[", b"[1,", b"0x", b'""x', b'{"message":5,'])
def test_regression_malformed_line_of_the_wrong_shape(tmp_path: Path, line: bytes) -> None:
    """Malformed JSON that msgspec first sees as a wrong shape is a skipped line, not a crash."""
    store = SessionStore.open(_write(tmp_path, line + b"\n"), read_only=True)
    assert [w.line for w in store.warnings] == [2]
    assert len(store) == 0
    store.close()


def test_regression_huge_number_in_an_eagerly_parsed_line(tmp_path: Path) -> None:
    """``1e999`` (Infinity for JSON.parse) in a label line: msgspec skips it, orjson refuses it."""
    body = b'{"type":"label","id":"x","parentId":null,"targetId":"x","n":1e999}\n'
    store = SessionStore.open(_write(tmp_path, body), read_only=True)
    assert [n.id for n in store.nodes()] == ["x"]
    store.tree()
    store.project()
    store.close()


@pytest.mark.parametrize("content", [b'"\xff"', b"1e999"])
def test_regression_content_the_fast_path_skips(tmp_path: Path, content: bytes) -> None:
    """Content the skeleton decode skips unchecked must not make a later project()/get() raise."""
    body = (
        b'{"type":"message","id":"x","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",'
        b'"message":{"role":"user","content":' + content + b"}}\n"
    )
    store = SessionStore.open(_write(tmp_path, body), read_only=True)
    assert store.project().source_entry_ids == ["x"]
    assert store.get("x")["message"]["role"] == "user"
    store.close()
