"""pi's entry and message shapes (session format v3, pi 1.6) and the one walk over them.

Everything in pitui that reads a message's text, its tool calls, or what of it counts as tokens
goes through this module: the token estimators (chars/4 and tiktoken), the summarizer's
serialization, the request conversion, search, the one-line renderer, the chat and the
inspectors. The TypedDicts document the shapes; the helpers accept any value and never trust
it (session files are untrusted input: every field may be missing or of the wrong type).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from pitui.text import js_stringify

# ----------------------------------------------------------------------------- content blocks


class TextBlock(TypedDict, total=False):
    type: Literal["text"]
    text: str
    textSignature: str


class ImageBlock(TypedDict, total=False):
    type: Literal["image"]
    data: str  # base64
    mimeType: str


class ThinkingBlock(TypedDict, total=False):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: str
    """For redacted thinking, the provider's opaque payload."""
    redacted: bool


class ToolCallBlock(TypedDict, total=False):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: str


# ----------------------------------------------------------------------------- messages


class Usage(TypedDict, total=False):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: dict[str, float]  # input, output, cacheRead, cacheWrite, total


class AttachedFile(TypedDict, total=False):
    """A file mentioned with ``@path`` in a prompt, whose content the message carries."""

    path: str
    """As shown to the user (relative to the working directory when inside it)."""
    size: int
    """Bytes on disk."""
    lines: int
    """Lines included (fewer than the file has when ``truncated``)."""
    truncated: bool
    omitted: str
    """Why nothing of it is included: ``binary``, ``unreadable: <reason>``."""


class UserMessage(TypedDict, total=False):
    role: Literal["user"]
    content: str | list[TextBlock | ImageBlock]
    timestamp: int
    pituiFiles: list[AttachedFile]
    """pitui's record of the ``@path`` files whose content the first text blocks are (one
    block each, pi's ``<file name="...">`` form); pi ignores the field and reads the blocks
    as text."""


class AssistantMessage(TypedDict, total=False):
    role: Literal["assistant"]
    content: list[TextBlock | ThinkingBlock | ToolCallBlock]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: Literal["stop", "length", "toolUse", "error", "aborted"]
    errorMessage: str
    timestamp: int


class NestedCalls(TypedDict, total=False):
    """Calls a tool made itself (pi's code mode), each ``{name, arguments, ...}``."""

    calls: list[dict[str, Any]]


class ToolResultMessage(TypedDict, total=False):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextBlock | ImageBlock]
    details: Any
    isError: bool
    nestedCalls: NestedCalls
    usage: Usage
    timestamp: int


class BashExecutionMessage(TypedDict, total=False):
    """A user's ``!cmd`` run (``excludeFromContext``: the ``!!cmd`` form)."""

    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: int | None
    cancelled: bool
    truncated: bool
    fullOutputPath: str
    excludeFromContext: bool
    timestamp: int


class CustomMessage(TypedDict, total=False):
    role: Literal["custom"]
    customType: str
    content: str | list[TextBlock | ImageBlock]
    display: bool
    details: Any
    timestamp: int


class SystemMessage(TypedDict, total=False):
    """pi 1.x's stored system prompt: sections patched by name, tools added and removed."""

    role: Literal["system"]
    content: str | list[TextBlock]
    sections: dict[str, str | None]
    toolsAdded: list[dict[str, Any]]
    toolsRemoved: list[dict[str, Any]]
    timestamp: int


class CompactionSummaryMessage(TypedDict, total=False):
    """In memory only: a ``compaction`` entry as the head of a projection."""

    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int


class BranchSummaryMessage(TypedDict, total=False):
    """In memory only: a ``branch_summary`` entry in a projection."""

    role: Literal["branchSummary"]
    summary: str
    fromId: str
    timestamp: int


Message = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | SystemMessage
    | CompactionSummaryMessage
    | BranchSummaryMessage
)

# ----------------------------------------------------------------------------- entries


class EntryBase(TypedDict, total=False):
    type: str
    id: str
    parentId: str | None
    timestamp: str


class MessageEntry(EntryBase, total=False):
    message: Message


class CompactionEntry(EntryBase, total=False):
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: Any
    fromHook: bool
    systemMessage: SystemMessage


class BranchSummaryEntry(EntryBase, total=False):
    fromId: str
    summary: str
    details: Any
    fromHook: bool


class CustomEntry(EntryBase, total=False):
    customType: str
    data: Any


class CustomMessageEntry(EntryBase, total=False):
    customType: str
    content: str | list[TextBlock | ImageBlock]
    display: bool
    details: Any


class LabelEntry(EntryBase, total=False):
    targetId: str
    label: str


class SessionInfoEntry(EntryBase, total=False):
    name: str


class ModelChangeEntry(EntryBase, total=False):
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(EntryBase, total=False):
    thinkingLevel: str


class ContextEditEntry(EntryBase, total=False):
    """Hides (``replacement`` null) or replaces a message for the model (pi 1.x)."""

    targetId: str
    replacement: dict[str, Any] | None


class CheckpointFileChange(TypedDict):
    path: str
    status: Literal["A", "M", "D"]


class CheckpointSkipped(TypedDict, total=False):
    path: str
    reason: str
    size: int


class CheckpointData(TypedDict, total=False):
    """``data`` of a ``pitui.checkpoint`` custom entry: the working directory at this point.

    ``commit``/``tree`` name the state in pitui's checkpoint store for the session's ``cwd``;
    ``changes`` are the files changed since ``previous`` (the checkpoint entry before it on the
    path, or null for the first, which lists none), at most a few hundred listed (``more``
    counts the rest) and ``counts`` sums them. ``reason``: ``before-change`` (before a run's
    first write/edit/bash), ``after-run``, ``outside`` (after a run whose tools changed
    nothing: someone else changed the files), or ``before-restore`` (the files just before a
    restore to ``restoreTo``). pi ignores it.
    """

    v: int
    commit: str
    tree: str
    reason: Literal["before-change", "after-run", "outside", "before-restore"]
    previous: str | None
    changes: list[CheckpointFileChange]
    more: int
    counts: dict[str, int]
    skipped: list[CheckpointSkipped]
    restoreTo: str


class CheckpointEntry(EntryBase, total=False):
    customType: Literal["pitui.checkpoint"]
    data: CheckpointData


class ApprovalData(TypedDict, total=False):
    """``data`` of a ``pitui.approval`` custom entry: one decision about a tool call.

    ``decision`` is ``allow`` or ``deny``; ``by`` says who decided: ``user`` (asked),
    ``allow-list`` (a settings pattern, in ``rule``), ``grant`` (an earlier "always" answer,
    ``rule``), ``read-only`` (the mode refuses changes) or ``no-prompt`` (``ask`` mode where
    nobody can be asked, as in ``-p``). ``subject`` is the command or path.
    """

    tool: str
    toolCallId: str
    decision: Literal["allow", "deny"]
    by: Literal["user", "allow-list", "grant", "read-only", "no-prompt"]
    mode: str
    subject: str
    rule: str
    grant: Literal["prefix", "session"]


class ApprovalEntry(EntryBase, total=False):
    customType: Literal["pitui.approval"]
    data: ApprovalData


CHECKPOINT_TYPE = "pitui.checkpoint"
APPROVAL_TYPE = "pitui.approval"


class UsageEntry(EntryBase, total=False):
    kind: str
    provider: str
    model: str
    usage: Usage
    note: str


BOOKKEEPING_TYPES = frozenset(
    {"label", "custom", "model_change", "thinking_level_change", "context_edit", "session_info"}
)
"""Entries that carry no conversation: the tree's default filter hides them."""

CONVERSATION_TYPES = frozenset({"message", "compaction", "branch_summary", "custom_message"})
"""Entries a reader sees in the conversation (the chat shows them, ``/label`` targets them)."""

CHAT_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom"})
"""Message roles shown in the chat (system messages are not part of the conversation)."""

IMAGE_CHARS = 4800
"""What pi's chars/4 estimate counts for an image."""


def is_conversation(entry_type: str | None, role: str | None) -> bool:
    """Does an entry show in the conversation (the chat pane, ``/label``'s target)?"""
    if entry_type == "message":
        return role in CHAT_ROLES
    return entry_type in CONVERSATION_TYPES


# ----------------------------------------------------------------------------- reading content


def blocks(content: Any) -> list[dict[str, Any]]:
    """The dict blocks of a content list (a string or anything else gives none)."""
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def content_texts(content: Any) -> list[str]:
    """The texts of a content value: a string, or its ``text`` blocks in order."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def content_text(content: Any, joiner: str = "") -> str:
    """The text of a content value (a string, or its text blocks joined)."""
    if isinstance(content, str):
        return content
    return joiner.join(content_texts(content))


ATTACHED_FILES = "pituiFiles"
FILE_BLOCK_START = '<file name="'


def attached_files(message: Any) -> list[dict[str, Any]]:
    """The ``@path`` files a user message carries (its ``pituiFiles`` record), in order."""
    if not isinstance(message, dict):
        return []
    files = message.get(ATTACHED_FILES)
    if not isinstance(files, list):
        return []
    return [f for f in files if isinstance(f, dict)]


def typed_content(message: Any) -> Any:
    """A message's content without the blocks of its attached files: what the user typed."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    count = len(attached_files(message))
    if not count or not isinstance(content, list):
        return content
    skip = 0
    for block in content[:count]:
        text = block.get("text") if isinstance(block, dict) else None
        if not (isinstance(text, str) and text.startswith(FILE_BLOCK_START)):
            break
        skip += 1
    return content[skip:]


def message_text(message: Any, joiner: str = "") -> str:
    """Text of a message's content: a string, or its text blocks joined (a user message's
    attached files left out: what was typed)."""
    if not isinstance(message, dict):
        return ""
    return content_text(typed_content(message), joiner)


def content_images(content: Any) -> int:
    """How many image blocks a content value has."""
    return sum(1 for b in blocks(content) if b.get("type") == "image")


def tool_calls(message: Any) -> list[dict[str, Any]]:
    """The ``toolCall`` blocks of an assistant message, in order."""
    if not isinstance(message, dict):
        return []
    return [b for b in blocks(message.get("content")) if b.get("type") == "toolCall"]


def nested_calls(message: Any) -> list[dict[str, Any]]:
    """The calls a tool made itself (pi's code mode): ``toolResult.nestedCalls.calls``."""
    if not isinstance(message, dict):
        return []
    nested = message.get("nestedCalls")
    calls = nested.get("calls") if isinstance(nested, dict) else None
    return blocks(calls)


def entry_message(entry: Any) -> dict[str, Any] | None:
    """The ``message`` of a message entry (None for other entries and broken ones)."""
    if not isinstance(entry, dict) or entry.get("type") != "message":
        return None
    message = entry.get("message")
    return message if isinstance(message, dict) else None


def has_text(message: Any) -> bool:
    """Does a message have any non-blank text?"""
    if not isinstance(message, dict):
        return False
    return any(t.strip() for t in content_texts(message.get("content")))


# ----------------------------------------------------------------------------- the role walk


def counted_parts(message: dict[str, Any]) -> tuple[list[str], int]:
    """What of a message counts toward its size: ``(texts, images)``, per pi 1.6's rules.

    user, custom and toolResult: text blocks and images; assistant: text, thinking, and each
    tool call's name and ``JSON.stringify``'d arguments; bashExecution: command and output;
    summaries: the summary; system: content, each section and the tool declarations. Both
    token estimators count these texts (characters or real tokens) plus a flat sum per image.
    """
    texts: list[str] = []
    images = 0
    role = message.get("role")
    if role in ("user", "custom", "toolResult", "system"):
        content = message.get("content")
        texts.extend(content_texts(content))
        images = content_images(content)
        if role == "system":
            sections = message.get("sections")
            if isinstance(sections, dict):
                texts.extend(v for v in sections.values() if isinstance(v, str) and v)
            tools = message.get("toolsAdded")
            if tools:
                texts.append(js_stringify(tools))
    elif role == "assistant":
        for block in blocks(message.get("content")):
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif kind == "thinking":
                thinking = block.get("thinking")
                if isinstance(thinking, str):
                    texts.append(thinking)
            elif kind == "toolCall":
                name = block.get("name")
                if isinstance(name, str):
                    texts.append(name)
                texts.append(js_stringify(block.get("arguments")))
    elif role == "bashExecution":
        for key in ("command", "output"):
            value = message.get(key)
            if isinstance(value, str):
                texts.append(value)
    elif role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        if isinstance(summary, str):
            texts.append(summary)
    return texts, images


# ----------------------------------------------------------------- as the model reads it


def bash_execution_text(message: dict[str, Any]) -> str:
    """A user's ``!cmd`` run, as the model reads it."""
    output = str(message.get("output") or "")
    text = f"Ran `{message.get('command', '')}`\n"
    text += f"```\n{output}\n```" if output else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(message.get("exitCode"), int) and message["exitCode"] != 0:
        text += f"\n\nCommand exited with code {message['exitCode']}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


COMPACTION_PREFIX = (
    "Earlier parts of this conversation were compacted into the summary below; "
    "continue from it.\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The user explored another branch of this conversation and came back; "
    "this summarizes that branch.\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"


def summary_text(message: dict[str, Any]) -> str:
    """A compaction or branch summary as the model reads it (a user message)."""
    summary = str(message.get("summary") or "")
    if message.get("role") == "branchSummary":
        return BRANCH_PREFIX + summary + BRANCH_SUFFIX
    return COMPACTION_PREFIX + summary + COMPACTION_SUFFIX


def as_user_text(message: dict[str, Any]) -> str | None:
    """What a non-LLM role becomes for the model (a user message's text, pi's ``convertToLlm``):
    bash runs, compaction and branch summaries. None: not one of these, or left out
    (``excludeFromContext``)."""
    role = message.get("role")
    if role == "bashExecution":
        return None if message.get("excludeFromContext") else bash_execution_text(message)
    if role in ("compactionSummary", "branchSummary"):
        return summary_text(message)
    return None
