"""Seeded generator of realistic pi v3 session files for the benchmarks.

    python benchmarks/generate.py --entries 20000 --seed 1 benchmarks/.data/s20k.jsonl

The content follows what pi writes (see the fixtures): a model change, a thinking level and the
system message with its sections and tools first; then user → assistant (text, thinking, tool
calls with usage) → tool results turns; rare ~50 KB tool results; forks where the user edits and
resubmits an earlier prompt; a compaction every few thousand entries whose ``firstKeptEntryId``
points ~20 entries back on the path and which stores the replayed system message as checkpoint;
occasional labels, session names, system patch messages, model and thinking level changes.
Ids are unique 8-hex, entry timestamps increase (ISO, ms, Z), message timestamps are epoch ms.
The same seed always gives the same bytes.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

START_MS = 1_768_468_596_314  # 2026-01-15T09:16:36.314Z, as in the fixtures
CWD = "/home/dev/acme"
PROVIDER = "anthropic"
MODELS = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high")

_WORD_TEXT = (
    "actual append argument assert async atomic await bash binding branch budget buffer cache "
    "callback child collapse command commit compaction config context cost cursor declaration "
    "dialog diff edit entry error estimate event exit expand expected file filter fixture flush "
    "focus follow-up footer fsync future group handler header input journal keymap label latency "
    "layout leaf level lock loop merge migrate modal model module mutex node output overflow "
    "parent parser patch path picker prompt provider queue read rebase render replay request "
    "response retry root schema screen scroll search section session sort status steering "
    "stream summary system test textual thinking thread throughput token tool tree usage version "
    "widget window write"
)
WORDS = tuple(_WORD_TEXT.split())
FILES = (
    "src/pitui/session/store.py",
    "src/pitui/session/loader.py",
    "src/pitui/widgets/editor.py",
    "src/pitui/widgets/footer.py",
    "src/pitui/providers/anthropic.py",
    "src/pitui/__init__.py",
    "tests/session/test_store.py",
    "tests/ui/test_tree.py",
    "scripts/bench.sh",
    "README.md",
    "pyproject.toml",
)
COMMANDS = (
    "python -m pytest -q tests/session",
    "ruff check .",
    "git status --short",
    "ls -la src/pitui",
    "grep -rn 'def project' src",
    "python -m pitui --help",
    "git diff --stat",
)
SESSION_NAMES = (
    "Refactor the session loader",
    "Tree browser performance",
    "Fix compaction cut point",
    "Provider retry handling",
)

TOOLS: dict[str, dict[str, Any]] = {
    "read": {
        "name": "read",
        "description": "Read the contents of a file. Supports text files and images.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to read (relative or absolute)",
                },
                "offset": {
                    "type": "number",
                    "description": "Line number to start reading from (1-indexed)",
                },
                "limit": {"type": "number", "description": "Maximum number of lines to read"},
            },
            "required": ["path"],
        },
    },
    "bash": {
        "name": "bash",
        "description": "Execute a bash command in the current working directory.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Shell command to execute"},
                "timeout": {"type": "number"},
            },
            "required": ["command"],
        },
    },
    "edit": {
        "name": "edit",
        "description": "Edit a file using exact text replacement.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string"},
                            "newText": {"type": "string"},
                        },
                        "required": ["oldText", "newText"],
                    },
                },
            },
            "required": ["path", "edits"],
        },
    },
    "write": {
        "name": "write",
        "description": (
            "Write content to a file. Creates the file if it does not exist, overwrites if it does."
        ),
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    "grep": {
        "name": "grep",
        "description": "Search file contents for a pattern.",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
}
BASE_SECTIONS: dict[str, str] = {
    "preamble": (
        "You are a coding assistant running inside pi, a coding agent harness. Help users "
        "inspect files, run commands, and modify code."
    ),
    "tools": (
        "<tools>\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, "
        "etc.)\n- edit: Make precise file edits with exact text replacement\n- write: Create or "
        "overwrite files\n\nAdditional tools may be available.\n</tools>"
    ),
    "rules": (
        "<rules>\n- Use read to examine files instead of cat or sed.\n- Use write only for new "
        "files or complete rewrites.\n- Be concise in your responses\n- Show file paths clearly "
        "when working with files\n</rules>"
    ),
    "docs": (
        "<docs>\nPi documentation (read only when the user asks about the harness itself).\n"
        "- Main documentation: /opt/pi/README.md\n</docs>"
    ),
    "cwd": f"<cwd>\n{CWD}\n</cwd>",
}

# Per-mille rates and sizes; tuned so the average line is ~700 bytes like pi's own files.
BIG_RESULT_EVERY = 200  # 1 in 200 tool results (~1 in 400 entries) is ~50 KB
BRANCH_EVERY_TURNS = 12  # about one user turn in 12 edits and resubmits an earlier prompt
COMPACTION_SPACING = (2500, 4000)  # entries between compactions
KEEP_BACK = 20  # firstKeptEntryId ~20 entries back on the path
LABEL_EVERY = 900
SESSION_INFO_EVERY = 6000
SYSTEM_PATCH_EVERY = 1500
MODEL_CHANGE_EVERY = 4000


class SystemState:
    """The replayed system message (sections + tools) at the generator's leaf."""

    def __init__(self) -> None:
        self.sections: dict[str, str] = dict(BASE_SECTIONS)
        self.tools: list[str] = ["read", "bash", "edit", "write"]

    def copy(self) -> SystemState:
        other = SystemState()
        other.sections = dict(self.sections)
        other.tools = list(self.tools)
        return other

    def checkpoint(self, ms: int) -> dict[str, Any]:
        return {
            "role": "system",
            "content": "",
            "sections": dict(self.sections),
            "toolsAdded": [TOOLS[name] for name in self.tools],
            "timestamp": ms,
        }


class Generator:
    def __init__(self, entries: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.target = entries
        self.count = 0
        self.ms = START_MS
        self.ids: set[str] = set()
        self.lines: list[bytes] = []
        # The active path: ids root → leaf, and the type/role of each (for branch/keep choices).
        self.path: list[str] = []
        self.kinds: list[str] = []
        self.last_compaction_pos = -1
        self.next_compaction = self.rng.randint(*COMPACTION_SPACING)
        self.system = SystemState()
        # (path length when applied, state before) so a fork can undo system patches it cuts off.
        self.system_undo: list[tuple[int, SystemState]] = []
        self.tool_seq = 0
        self.turns = 0
        self.compactions = 0
        self.branches = 0
        self.big_results = 0
        self.input_tokens = 600
        self.model = MODELS[0]

    # ------------------------------------------------------------------ basics

    @property
    def done(self) -> bool:
        return self.count >= self.target

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def tick(self, lo: int, hi: int) -> int:
        self.ms += self.rng.randint(lo, hi)
        return self.ms

    @staticmethod
    def iso(ms: int) -> str:
        dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
        return f"{dt:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"

    def emit(self, entry_type: str, fields: dict[str, Any], kind: str, lo: int, hi: int) -> str:
        """Write one entry as a child of the leaf; it becomes the leaf."""
        ms = self.tick(lo, hi)
        entry_id = self.new_id()
        entry: dict[str, Any] = {
            "type": entry_type,
            "id": entry_id,
            "parentId": self.path[-1] if self.path else None,
            "timestamp": self.iso(ms),
        }
        message = fields.get("message")
        if isinstance(message, dict):
            message["timestamp"] = ms - 1
        entry.update(fields)
        self.lines.append(orjson.dumps(entry))
        self.path.append(entry_id)
        self.kinds.append(kind)
        self.count += 1
        return entry_id

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(lo, hi)))

    def sentences(self, lo: int, hi: int) -> str:
        out = []
        for _ in range(self.rng.randint(lo, hi)):
            s = self.words(5, 16)
            out.append(s[0].upper() + s[1:] + ".")
        return " ".join(out)

    def code(self, lines: int) -> str:
        rng = self.rng
        out = []
        for i in range(lines):
            a, b, c = rng.choices(WORDS, k=3)
            if rng.random() < 0.25:
                out.append(f"def {a}_{i}(self, {b}):")
            else:
                out.append(f"    {a} = {b}({c}, {i})")
        return "\n".join(out)

    def usage(self, output: int) -> dict[str, Any]:
        self.input_tokens = min(180_000, self.input_tokens + self.rng.randint(20, 400))
        cache_read = self.rng.choice((0, 0, self.input_tokens // 2))
        inp = self.input_tokens - cache_read
        cost_in, cost_out, cost_cr = inp * 3e-6, output * 15e-6, cache_read * 3e-7
        return {
            "input": inp,
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": 0,
            "totalTokens": inp + output + cache_read,
            "cost": {
                "input": round(cost_in, 6),
                "output": round(cost_out, 6),
                "cacheRead": round(cost_cr, 6),
                "cacheWrite": 0,
                "total": round(cost_in + cost_out + cost_cr, 6),
            },
        }

    # ------------------------------------------------------------------ entries

    def start(self) -> None:
        self.emit(
            "model_change", {"provider": PROVIDER, "modelId": MODELS[0]}, "model_change", 1, 1
        )
        self.emit("thinking_level_change", {"thinkingLevel": "medium"}, "thinking", 1, 1)
        self.emit("message", {"message": self.system.checkpoint(0)}, "system", 20, 60)

    def user(self) -> None:
        text = self.sentences(1, 4)
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
        self.emit("message", {"message": message}, "user", 3_000, 60_000)

    def assistant(self, tool_calls: int) -> list[tuple[str, str]]:
        rng = self.rng
        content: list[dict[str, Any]] = []
        if rng.random() < 0.2:
            content.append(
                {
                    "type": "thinking",
                    "thinking": self.sentences(1, 3),
                    "thinkingSignature": f"sig_{rng.getrandbits(24):06x}",
                }
            )
        if tool_calls == 0:
            content.append({"type": "text", "text": self.sentences(1, 4)})
        elif rng.random() < 0.6:
            content.append({"type": "text", "text": self.sentences(1, 1)})
        calls: list[tuple[str, str]] = []
        for _ in range(tool_calls):
            self.tool_seq += 1
            call_id = f"toolu_{rng.getrandbits(96):024x}"
            name = rng.choices(("read", "bash", "edit", "write", "grep"), (5, 3, 2, 1, 1))[0]
            if name == "grep" and "grep" not in self.system.tools:
                name = "read"
            args: dict[str, Any]
            if name == "read":
                args = {"path": rng.choice(FILES)}
                if rng.random() < 0.3:
                    args["offset"] = rng.randint(1, 400)
                    args["limit"] = 80
            elif name == "bash":
                args = {"command": rng.choice(COMMANDS)}
            elif name == "edit":
                args = {
                    "path": rng.choice(FILES),
                    "edits": [{"oldText": self.code(1), "newText": self.code(2)}],
                }
            elif name == "write":
                args = {"path": rng.choice(FILES), "content": self.code(rng.randint(3, 12))}
            else:
                args = {"pattern": rng.choice(WORDS), "path": "src"}
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
            calls.append((call_id, name))
        message = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": PROVIDER,
            "model": self.model,
            "usage": self.usage(rng.randint(8, 400)),
            "stopReason": "toolUse" if calls else "stop",
        }
        self.emit("message", {"message": message}, "assistant", 1_000, 30_000)
        return calls

    def tool_result(self, call_id: str, name: str) -> None:
        rng = self.rng
        if rng.randrange(BIG_RESULT_EVERY) == 0:
            self.big_results += 1
            text = self.code(rng.randint(1300, 2000))  # ~40-60 KB
        elif name == "read":
            text = self.code(rng.randint(3, 16))
        elif name == "bash":
            text = self.code(rng.randint(2, 8)) + f"\n\nexit code: {rng.choice((0, 0, 0, 1))}"
        elif name == "edit":
            text = f"Successfully replaced 1 block(s) in {rng.choice(FILES)}."
        elif name == "write":
            text = f"Successfully wrote {rng.randint(80, 4000)} bytes to {rng.choice(FILES)}"
        else:
            lines = [
                f"{rng.choice(FILES)}:{rng.randint(1, 400)}: {self.sentences(1, 1)}"
                for _ in range(rng.randint(1, 6))
            ]
            text = "\n".join(lines)
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": rng.random() < 0.03,
        }
        self.emit("message", {"message": message}, "toolResult", 50, 4_000)

    def compaction(self) -> None:
        rng = self.rng
        back = KEEP_BACK + rng.randint(-4, 4)
        lo = max(self.last_compaction_pos + 1, len(self.path) - back)
        # Prefer a user message near that point (a turn start), as pi's cut point does.
        first_kept = lo
        for pos in range(lo, min(lo + 8, len(self.path))):
            if self.kinds[pos] == "user":
                first_kept = pos
                break
        read_files = sorted(set(rng.choices(FILES, k=rng.randint(1, 5))))
        modified = sorted(set(rng.choices(FILES, k=rng.randint(0, 3))))
        self.compactions += 1
        summary = (
            f"## Goal\n{self.sentences(1, 2)}\n\n## Constraints & Preferences\n- (none)\n\n"
            f"## Progress\n### Done\n- [x] {self.sentences(1, 3)}\n\n### In Progress\n"
            f"- [ ] {self.sentences(1, 2)}\n\n### Blocked\n- (none)\n\n## Key Decisions\n"
            f"- **Compaction {self.compactions}**: {self.sentences(1, 2)}\n\n## Next Steps\n"
            f"1. {self.sentences(1, 1)}\n\n## Critical Context\n- (none)\n\n"
            "<read-files>\n" + "\n".join(read_files) + "\n</read-files>"
        )
        if modified:
            summary += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
        tokens_before = self.input_tokens
        self.input_tokens = rng.randint(1500, 6000)
        fields = {
            "summary": summary,
            "firstKeptEntryId": self.path[first_kept],
            "tokensBefore": tokens_before,
            "details": {"readFiles": read_files, "modifiedFiles": modified},
            "usage": self.usage(rng.randint(300, 1500)),
            "fromHook": False,
            "systemMessage": self.system.checkpoint(self.ms),
        }
        self.emit("compaction", fields, "compaction", 500, 5_000)
        self.last_compaction_pos = len(self.path) - 1
        self.system_undo.clear()

    def system_patch(self) -> None:
        rng = self.rng
        before = self.system.copy()
        message: dict[str, Any] = {"role": "system", "content": ""}
        choice = rng.randrange(4)
        if choice == 0:
            rules = "\n".join(f"- {self.sentences(1, 1)}" for _ in range(rng.randint(2, 5)))
            message["sections"] = {"rules": f"<rules>\n{rules}\n</rules>"}
            self.system.sections["rules"] = message["sections"]["rules"]
        elif choice == 1:
            text = f"<addendum>\n{self.sentences(1, 3)}\n</addendum>"
            message["sections"] = {"addendum": text}
            self.system.sections["addendum"] = text
        elif choice == 2 and "addendum" in self.system.sections:
            message["sections"] = {"addendum": None}
            del self.system.sections["addendum"]
        elif "grep" in self.system.tools:
            message["toolsRemoved"] = [{"name": "grep"}]
            self.system.tools.remove("grep")
        else:
            message["toolsAdded"] = [TOOLS["grep"]]
            self.system.tools.append("grep")
        self.system_undo.append((len(self.path), before))
        self.emit("message", {"message": message}, "system", 5, 50)

    def label(self) -> None:
        rng = self.rng
        pos = rng.randrange(max(0, len(self.path) - 50), len(self.path))
        fields: dict[str, Any] = {"targetId": self.path[pos]}
        if rng.random() < 0.85:
            fields["label"] = rng.choice(("checkpoint", "good", "before-refactor", "bug")) + (
                f"-{rng.randint(1, 99)}"
            )
        self.emit("label", fields, "label", 100, 5_000)

    def session_info(self) -> None:
        name = f"{self.rng.choice(SESSION_NAMES)} ({self.rng.randint(1, 9)})"
        self.emit("session_info", {"name": name}, "session_info", 100, 5_000)

    def fork(self) -> None:
        """Edit and resubmit: leaf back to the parent of a recent user message (or a few back)."""
        rng = self.rng
        floor = self.last_compaction_pos + 1
        back = rng.randint(2, 30)
        pos = max(floor + 1, len(self.path) - back)
        for p in range(pos, len(self.path)):
            if self.kinds[p] == "user":
                pos = p
                break
        if pos >= len(self.path) - 1:
            return
        # The new leaf is path[pos - 1]; the user turn at path[pos] gets a sibling.
        keep = pos
        del self.path[keep:]
        del self.kinds[keep:]
        while self.system_undo and self.system_undo[-1][0] >= keep:
            self.system = self.system_undo.pop()[1]
        self.branches += 1

    # ------------------------------------------------------------------ the session

    def run(self) -> None:
        rng = self.rng
        self.start()
        while not self.done:
            self.turns += 1
            if self.count >= self.next_compaction and len(self.path) > KEEP_BACK + 10:
                self.compaction()
                self.next_compaction = self.count + rng.randint(*COMPACTION_SPACING)
                continue
            if self.turns > 3 and rng.randrange(BRANCH_EVERY_TURNS) == 0:
                self.fork()
            if rng.randrange(SYSTEM_PATCH_EVERY // 6) == 0:
                self.system_patch()
            if rng.randrange(MODEL_CHANGE_EVERY // 6) == 0:
                self.model = rng.choice(MODELS)
                fields = {"provider": PROVIDER, "modelId": self.model}
                self.emit("model_change", fields, "model_change", 100, 2_000)
                if rng.random() < 0.5:
                    level = rng.choice(THINKING_LEVELS)
                    self.emit("thinking_level_change", {"thinkingLevel": level}, "thinking", 1, 50)
            if self.done:
                break
            self.user()
            rounds = rng.choices((0, 1, 2, 3, 4, 6), (2, 3, 3, 2, 1, 1))[0]
            for _ in range(rounds):
                if self.done:
                    break
                calls = self.assistant(rng.choices((1, 2, 3), (6, 3, 1))[0])
                for call_id, name in calls:
                    if self.done:
                        break
                    self.tool_result(call_id, name)
            if not self.done:
                self.assistant(0)
            if not self.done and rng.randrange(LABEL_EVERY // 6) == 0:
                self.label()
            if not self.done and (self.turns == 2 or rng.randrange(SESSION_INFO_EVERY // 6) == 0):
                self.session_info()

    def header(self) -> bytes:
        rand = self.rng.getrandbits(74)
        value = (START_MS << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62)
        value |= rand & ((1 << 62) - 1)
        h = f"{value:032x}"
        session_id = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        header = {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": self.iso(START_MS - 1),
            "cwd": CWD,
        }
        return orjson.dumps(header)


def generate(entries: int, seed: int, out: Path) -> dict[str, Any]:
    """Write a session with ``entries`` entries (header not counted) to ``out``; return stats."""
    gen = Generator(entries, seed)
    header = gen.header()
    gen.run()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    data = b"\n".join([header, *gen.lines]) + b"\n"
    tmp.write_bytes(data)
    tmp.replace(out)
    return {
        "path": str(out),
        "entries": gen.count,
        "lines": gen.count + 1,
        "bytes": len(data),
        "bytes_per_entry": round(len(data) / max(1, gen.count)),
        "compactions": gen.compactions,
        "forks": gen.branches,
        "big_tool_results": gen.big_results,
        "leaf_path_length": len(gen.path),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    stats = generate(args.entries, args.seed, args.out)
    elapsed = time.perf_counter() - t0
    print(
        f"{stats['path']}: {stats['entries']:,} entries (+ header), {stats['bytes'] / 1e6:.1f} MB, "
        f"{stats['bytes_per_entry']} B/entry, {stats['compactions']} compactions, "
        f"{stats['forks']} forks, {stats['big_tool_results']} big tool results, "
        f"leaf path {stats['leaf_path_length']:,} entries ({elapsed:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
