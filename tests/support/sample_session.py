# ruff: noqa: E501
"""A small session with every kind of content, written line by line with fixed ids and
timestamps (the same bytes every time): the export tests, the Chromium screenshot and the
README's screenshot use it.

It has a system prompt (sections, tools) and a later patch, a model change, user messages,
assistant replies with thinking, Markdown and costs, read/edit/bash tool calls with results
(the bash output in SGR colours), an image, a fork (an abandoned alternative), a branch summary,
a compaction, a context_edit omitting a failed reply, a label and a session name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

START_MS = 1_768_470_000_000  # 2026-01-15T09:40:00Z
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
SGR_OUTPUT = (
    "\x1b[1m============================= test session starts ==============================\x1b[0m\n"
    "collected 2 items\n\n"
    "test_wordfreq.py \x1b[32m.\x1b[0m\x1b[31mF\x1b[0m\n\n"
    "\x1b[31mFAILED\x1b[0m test_wordfreq.py::test_ignores_case - AssertionError\n"
    "\x1b[31m========================= \x1b[1m1 failed\x1b[0m, \x1b[32m1 passed\x1b[0m\x1b[31m in 0.03s "
    "=========================\x1b[0m"
)
MARKDOWN_REPLY = """The failing test is **`test_ignores_case`**: `words()` splits on whitespace only.

### What goes wrong

1. `"The"` and `"the"` are counted as *different* words;
2. punctuation stays attached (`cat.` vs `cat`).

| word | expected | actual |
|------|---------:|-------:|
| the  | 3        | 2      |

```python
def words(text):
    return re.findall(r"[a-z']+", text.lower())
```

See [the re module](https://docs.python.org/3/library/re.html)."""


class SampleWriter:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.count = 0
        self.ms = START_MS
        self.parent: str | None = None

    def iso(self) -> str:
        from datetime import UTC, datetime

        return (
            datetime.fromtimestamp(self.ms / 1000, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )

    def entry(self, kind: str, **fields: Any) -> str:
        self.count += 1
        self.ms += 7_000
        entry_id = f"e{self.count:07d}"
        line = {"type": kind, "id": entry_id, "parentId": self.parent, "timestamp": self.iso()}
        line.update(fields)
        self.lines.append(line)
        self.parent = entry_id
        return entry_id

    def message(self, role: str, **fields: Any) -> str:
        return self.entry("message", message={"role": role, **fields, "timestamp": self.ms})

    def user(self, text: str) -> str:
        return self.message("user", content=[{"type": "text", "text": text}])

    def assistant(self, content: list[dict[str, Any]], tokens: int, stop: str = "stop") -> str:
        cost = round(tokens * 3e-6 + 0.0005, 6)
        usage = {
            "input": tokens,
            "output": 120,
            "cacheRead": tokens // 2,
            "cacheWrite": 0,
            "totalTokens": tokens + 120 + tokens // 2,
            "cost": {"input": cost, "output": 0.0018, "cacheRead": 0.0001, "cacheWrite": 0,
                     "total": round(cost + 0.0019, 6)},
        }  # fmt: skip
        return self.message(
            "assistant",
            content=content,
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=usage,
            stopReason=stop,
        )

    def result(self, call_id: str, name: str, text: str, **extra: Any) -> str:
        return self.message(
            "toolResult",
            toolCallId=call_id,
            toolName=name,
            content=[{"type": "text", "text": text}],
            isError=False,
            **extra,
        )


def sample_lines() -> list[dict[str, Any]]:
    w = SampleWriter()
    tools = [
        {"name": "read", "description": "Read a file.",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "edit", "description": "Replace exact text in a file.",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "bash", "description": "Run a shell command.",
         "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
    ]  # fmt: skip
    w.message(
        "system",
        content="",
        sections={
            "preamble": "You are a coding agent working in a terminal.",
            "rules": "Read before you edit. Run the tests after a change.",
            "cwd": "Working directory: /home/me/wordfreq",
        },
        toolsAdded=tools,
    )
    w.entry("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    w.entry("thinking_level_change", thinkingLevel="medium")
    start = w.parent
    w.user("Why do the tests fail?")
    w.assistant([{"type": "text", "text": "I would have to guess without running them."}], 900)
    w.parent = start
    w.user("The tests fail. Find out why and fix it.")
    w.assistant(
        [
            {"type": "thinking", "thinking": "Run the tests first, then read wordfreq.py."},
            {"type": "text", "text": "I'll run the test suite first."},
            {"type": "toolCall", "id": "call_1", "name": "bash",
             "arguments": {"command": "python -m pytest -q"}},
        ],
        1200,
        "toolUse",
    )  # fmt: skip
    w.result("call_1", "bash", SGR_OUTPUT, details={"exitCode": 1})
    w.assistant(
        [
            {
                "type": "toolCall",
                "id": "call_2",
                "name": "read",
                "arguments": {"path": "wordfreq.py"},
            }
        ],
        1500,
        "toolUse",
    )
    w.result(
        "call_2", "read", "1\timport sys\n2\t\n3\tdef words(text):\n4\t    return text.split()"
    )
    w.assistant(
        [
            {"type": "text", "text": "`words()` splits on whitespace only; I'll fix it."},
            {"type": "toolCall", "id": "call_3", "name": "edit", "arguments": {
                "path": "wordfreq.py",
                "edits": [{"oldText": "def words(text):\n    return text.split()",
                           "newText": "def words(text):\n"
                                      "    return re.findall(r\"[a-z']+\", text.lower())"}]}},
        ],
        1800,
        "toolUse",
    )  # fmt: skip
    w.result("call_3", "edit", "Successfully replaced 1 block(s) in wordfreq.py.")
    fixed = w.assistant([{"type": "text", "text": MARKDOWN_REPLY}], 2100)
    w.entry("label", targetId=fixed, label="fixed")
    w.entry("session_info", name="Fix word counting")
    fork = w.parent
    w.user("Could it print JSON instead?")
    abandoned = w.assistant([{"type": "text", "text": "Yes, with a --json flag."}], 2300)
    w.parent = fork
    w.entry(
        "branch_summary",
        fromId=abandoned,
        summary="The user asked about **JSON output**; a `--json` flag was suggested.",
        details={"readFiles": [], "modifiedFiles": []},
    )
    kept = w.user("Add a --top option and show me a screenshot.")
    w.message(
        "user",
        content=[
            {"type": "text", "text": "Here is the current output:"},
            {"type": "image", "mimeType": "image/png", "data": PNG_1PX},
        ],
    )
    w.assistant([{"type": "text", "text": "Adding `--top` with argparse."}], 2600)
    w.message(
        "system",
        content="",
        sections={"rules": "Read before you edit. Run the tests after a change. Be brief."},
        toolsRemoved=[{"name": "read"}],
    )
    w.entry(
        "compaction",
        summary="## Goal\nFix word counting and add `--top`.\n\n## Progress\n- [x] tests pass",
        firstKeptEntryId=kept,
        tokensBefore=4321,
        details={"readFiles": ["wordfreq.py"], "modifiedFiles": ["wordfreq.py"]},
        systemMessage={
            "role": "system",
            "content": "",
            "sections": {
                "preamble": "You are a coding agent working in a terminal.",
                "rules": "Read before you edit. Run the tests after a change. Be brief.",
                "cwd": "Working directory: /home/me/wordfreq",
            },
            "toolsAdded": tools[1:],
            "timestamp": START_MS,
        },
        usage={"input": 4000, "output": 300, "cacheRead": 0, "cacheWrite": 0,
               "totalTokens": 4300, "cost": {"total": 0.0165}},
    )  # fmt: skip
    w.user("Run it on README.md.")
    failed = w.assistant([], 0, "error")
    w.lines[-1]["message"]["errorMessage"] = "RateLimitError: try again in 2s"
    w.entry("context_edit", targetId=failed, replacement=None)
    w.assistant(
        [{"type": "toolCall", "id": "call_4", "name": "bash",
          "arguments": {"command": "python wordfreq.py --top 3 README.md"}}],
        2900,
        "toolUse",
    )  # fmt: skip
    w.result(
        "call_4", "bash", "\x1b[1m    8\x1b[0m  the\n\x1b[1m    4\x1b[0m  words\n    3  wordfreq"
    )
    w.assistant([{"type": "text", "text": "Done: **the** (8), **words** (4), **wordfreq** (3)."}],
                3100)  # fmt: skip
    return w.lines


def write_sample_session(path: Path) -> Path:
    header = {"type": "session", "version": 3, "id": "0194c0de-0000-7000-8000-000000000001",
              "timestamp": "2026-01-15T09:40:00.000Z", "cwd": "/home/me/wordfreq"}  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [header, *sample_lines()]
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return path
