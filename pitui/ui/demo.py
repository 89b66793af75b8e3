"""``pitui --demo``: a generated example session, answered by the offline demo model.

:func:`run_demo` makes a temporary folder holding a small project (``wordfreq``) and a session
about it, starts the demo model (:mod:`pitui.llm.demo_model`) and opens the app on the session.
Everything is removed when the app exits.

The session (:func:`build_demo_session`) is written through the store's append methods, so it
is an ordinary pi v3 file. It holds a system message with sections and tool declarations;
user, assistant and tool messages with ``read``/``edit``/``bash`` calls and results; an
edit-and-resubmit sibling of the first prompt and an abandoned alternative later on (three
leaves); a compaction (with its ``systemMessage`` checkpoint and file details); a failed reply
omitted by a ``context_edit`` before its retry; a label; and a session name.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pitui.agent.session import AgentSession
from pitui.agent.system_prompt import build_sections, system_patch
from pitui.agent.tools import default_tools
from pitui.agent.tools.edit import unified_diff
from pitui.compaction.file_ops import FileOps, format_file_operations
from pitui.compaction.prepare import projected_context_tokens
from pitui.compaction.serialize import serialize_conversation
from pitui.compaction.tokens import estimate_tokens
from pitui.config.settings import Settings, deep_merge
from pitui.llm.demo_model import (
    DEMO_MODEL,
    DEMO_MODEL_ID,
    DemoModelServer,
    demo_settings,
    summary_reply,
)
from pitui.session import SessionStore
from pitui.ui.app import PituiApp

SESSION_NAME = "Fix word counting in wordfreq"
LABEL = "tests green"
SYSTEM_TOKENS = 1_100
"""What the demo's usage numbers count for the system prompt (a fixed figure, so the numbers do
not depend on the temporary folder's path)."""

AGENTS_MD = """\
# wordfreq

A small command-line tool that prints the most frequent words of text files.

- Run the tests with `python -m pytest -q`.
- Keep functions small and pure; no new dependencies.
"""

README_MD = """\
# wordfreq

wordfreq prints the words that occur most often in text files. Give it the files and it
prints one word per line with its count, the most frequent words first.

    python wordfreq.py --top 3 notes.txt

Words are counted without regard to case, and punctuation is not part of a word: the words
"The", "the" and "the," are the same word.
"""

WORDFREQ_V1 = '''\
"""Word frequencies for plain-text files."""

from __future__ import annotations

import sys
from collections import Counter


def words(text: str) -> list[str]:
    return text.split()


def top_words(text: str, n: int = 3) -> list[tuple[str, int]]:
    return Counter(words(text)).most_common(n)


def main(argv: list[str]) -> int:
    for path in argv[1:]:
        with open(path, encoding="utf-8") as f:
            for word, count in top_words(f.read()):
                print(f"{count:5}  {word}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
'''

TEST_WORDFREQ = """\
from wordfreq import top_words


def test_counts_words():
    assert top_words("a b a", 1) == [("a", 2)]


def test_ignores_case_and_punctuation():
    assert top_words("The cat. the CAT, the end!", 2) == [("the", 3), ("cat", 2)]
"""

FIX_WORDS = [
    {"oldText": "import sys\n", "newText": "import re\nimport sys\n"},
    {
        "oldText": "    return text.split()\n",
        "newText": '    return re.findall(r"[a-z\']+", text.lower())\n',
    },
]

OLD_MAIN = """\
def main(argv: list[str]) -> int:
    for path in argv[1:]:
        with open(path, encoding="utf-8") as f:
            for word, count in top_words(f.read()):
                print(f"{count:5}  {word}")
    return 0
"""

NEW_MAIN = """\
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Print the most frequent words.")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=3, help="how many words (default 3)")
    args = parser.parse_args(argv[1:])
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            for word, count in top_words(f.read(), args.top):
                print(f"{count:5}  {word}")
    return 0
"""

ADD_TOP = [
    {"oldText": "import re\n", "newText": "import argparse\nimport re\n"},
    {"oldText": OLD_MAIN, "newText": NEW_MAIN},
]

PYTEST_FAILED = """\
.F                                                                       [100%]
=================================== FAILURES ===================================
______________________ test_ignores_case_and_punctuation _______________________

    def test_ignores_case_and_punctuation():
>       assert top_words("The cat. the CAT, the end!", 2) == [("the", 3), ("cat", 2)]
E       AssertionError: assert [('the', 2), ('The', 1)] == [('the', 3), ('cat', 2)]

test_wordfreq.py:9: AssertionError
=========================== short test summary info ============================
FAILED test_wordfreq.py::test_ignores_case_and_punctuation - AssertionError: as...
1 failed, 1 passed in 0.03s"""

PYTEST_PASSED = """\
..                                                                       [100%]
2 passed in 0.02s"""


def _apply(text: str, edits: list[dict[str, str]]) -> str:
    for edit in edits:
        assert text.count(edit["oldText"]) == 1, edit["oldText"]
        text = text.replace(edit["oldText"], edit["newText"])
    return text


WORDFREQ_V2 = _apply(WORDFREQ_V1, FIX_WORDS)
WORDFREQ_V3 = _apply(WORDFREQ_V2, ADD_TOP)


def _top_words(text: str, n: int) -> list[tuple[str, int]]:
    """What the fixed ``wordfreq.top_words`` computes (for the demo's tool output)."""
    return Counter(re.findall(r"[a-z']+", text.lower())).most_common(n)


def write_demo_project(folder: Path) -> Path:
    """The example project, as it is at the end of the session's active branch."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "AGENTS.md": AGENTS_MD,
        "README.md": README_MD,
        "wordfreq.py": WORDFREQ_V3,
        "test_wordfreq.py": TEST_WORDFREQ,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# ------------------------------------------------------------------------------ the session


class _Writer:
    """Appends the demo conversation with message timestamps from ``start`` onwards."""

    def __init__(self, store: SessionStore, start_ms: int) -> None:
        self.store = store
        self.now = start_ms
        self.calls = 0

    def _tick(self, seconds: int) -> int:
        self.now += seconds * 1000
        return self.now

    def user(self, text: str, after: int = 40) -> str:
        message = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "timestamp": self._tick(after),
        }
        return self.store.append_message(message)

    def _usage(self, output_tokens: int | None) -> dict[str, Any]:
        """Usage as a provider reports it; ``None``: a failed request (all zero)."""
        if output_tokens is None:
            counts = dict.fromkeys(("input", "output", "cacheRead", "cacheWrite"), 0)
        else:
            messages = self.store.project().messages
            context = SYSTEM_TOKENS + sum(
                estimate_tokens(m) for m in messages if m.get("role") != "system"
            )
            counts = {"input": context, "output": output_tokens, "cacheRead": 0, "cacheWrite": 0}
        costs = dict.fromkeys(("input", "output", "cacheRead", "cacheWrite", "total"), 0.0)
        return {**counts, "totalTokens": sum(counts.values()), "cost": costs}

    def assistant(
        self,
        text: str | None = None,
        call: tuple[str, dict[str, Any]] | None = None,
        *,
        after: int = 6,
        error: str | None = None,
    ) -> tuple[str, str | None]:
        """Append an assistant reply; returns (entry id, tool call id)."""
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        call_id: str | None = None
        if call is not None:
            self.calls += 1
            call_id = f"call_demo_{self.calls:02d}"
            content.append(
                {"type": "toolCall", "id": call_id, "name": call[0], "arguments": call[1]}
            )
        output = sum(estimate_tokens({"role": "assistant", "content": [b]}) for b in content)
        stop = "error" if error else ("toolUse" if call else "stop")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "litellm",
            "provider": "openai",
            "model": DEMO_MODEL_ID,
            "usage": self._usage(None if error else max(1, output)),
            "stopReason": stop,
        }
        if error:
            message["errorMessage"] = error
        message["timestamp"] = self._tick(after)
        return self.store.append_message(message), call_id

    def result(
        self,
        call_id: str | None,
        name: str,
        text: str,
        *,
        details: dict[str, Any] | None = None,
        is_error: bool = False,
        after: int = 2,
    ) -> str:
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            message["details"] = details
        message["isError"] = is_error
        message["timestamp"] = self._tick(after)
        return self.store.append_message(message)

    def bash(self, call_id: str | None, output: str, exit_code: int) -> str:
        details = {"exitCode": exit_code, "truncated": False, "timedOut": False}
        return self.result(call_id, "bash", f"{output}\n\nexit code: {exit_code}", details=details)


def _read_output(text: str) -> str:
    return "\n".join(text.splitlines())  # the read tool's output (pi's: no line numbers)


def _edit_details(path: str, before: str, after: str) -> dict[str, Any]:
    first = next(
        (
            i
            for i, (a, b) in enumerate(zip(before.splitlines(), after.splitlines(), strict=False))
            if a != b
        ),
        0,
    )
    return {"path": path, "diff": unified_diff(before, after, path), "firstChangedLine": first + 1}


def build_demo_session(
    folder: Path, cwd: Path | None = None, *, now: Callable[[], float] = time.time
) -> Path:
    """Write the example session into ``folder``; returns the file's path.

    ``cwd`` is the project directory recorded in the header and the system prompt (default:
    ``folder``'s parent / ``wordfreq``, which need not exist). Message timestamps end a few
    minutes before ``now()``.
    """
    project = cwd if cwd is not None else folder.parent / "wordfreq"
    store = SessionStore.create(folder, str(project))
    try:
        _write_conversation(store, project, int(now() * 1000) - 12 * 60 * 1000)
        assert store.path is not None
        return store.path
    finally:
        store.close()


def _write_conversation(store: SessionStore, project: Path, start_ms: int) -> None:
    w = _Writer(store, start_ms)
    declarations = [tool.declaration() for tool in default_tools()]
    system = system_patch(None, build_sections(project, declarations), declarations)
    assert system is not None
    system["timestamp"] = start_ms
    store.append_message(system)
    store.append_model_change("openai", DEMO_MODEL_ID)
    start = store.append_thinking_level_change("off")

    # The first prompt, later edited and resubmitted: the original stays as a sibling branch.
    w.user("Why do the tests fail? Just explain, don't change anything yet.")
    w.assistant(
        "Without running them I can only guess from the names: `test_ignores_case_and_"
        "punctuation` expects `top_words` to treat *The* and *the* as one word and to drop "
        "the punctuation, while `words()` splits on whitespace only.\n\n"
        "Want me to run the tests and fix it?",
        after=9,
    )

    store.branch(start)
    w.user("The tests fail. Find out why and fix it.", after=75)
    _, call = w.assistant(
        "I'll run the test suite first.", ("bash", {"command": "python -m pytest -q"})
    )
    w.bash(call, PYTEST_FAILED, 1)
    _, call = w.assistant(
        "One test fails: `top_words` counts *The* and *the* as different words, and keeps "
        "the punctuation in *cat.* and *CAT,*. Let me look at how words are split.",
        ("read", {"path": "wordfreq.py"}),
    )
    w.result(call, "read", _read_output(WORDFREQ_V1))
    _, call = w.assistant(
        "`words()` uses `str.split()`. I'll lowercase the text and keep only runs of letters "
        "and apostrophes.",
        ("edit", {"path": "wordfreq.py", "edits": FIX_WORDS}),
        after=11,
    )
    w.result(
        call,
        "edit",
        "Successfully replaced 2 block(s) in wordfreq.py.",
        details=_edit_details("wordfreq.py", WORDFREQ_V1, WORDFREQ_V2),
    )
    _, call = w.assistant(None, ("bash", {"command": "python -m pytest -q"}), after=3)
    w.bash(call, PYTEST_PASSED, 0)
    fixed, _ = w.assistant(
        'Fixed. `words()` in `wordfreq.py` now uses `re.findall(r"[a-z\']+", text.lower())`, '
        "so case and punctuation no longer split a word into several. Both tests pass.",
        after=5,
    )
    store.append_session_info(SESSION_NAME)
    store.append_label(fixed, LABEL)
    branch_point = store.leaf_id
    assert branch_point is not None

    # An alternative that was left behind.
    w.user("Could it print JSON instead of columns?", after=120)
    w.assistant(
        "Yes: a `--json` flag could print `json.dumps(dict(top_words(text, n)))` instead of "
        "the columns. Shall I add it, or keep the plain output?",
        after=8,
    )

    store.branch(branch_point)
    kept = w.user("Add a --top option so I can choose how many words to print.", after=60)
    _, call = w.assistant(
        "I'll switch `main()` to `argparse`, with a `--top` option that defaults to 3.",
        ("edit", {"path": "wordfreq.py", "edits": ADD_TOP}),
        after=14,
    )
    w.result(
        call,
        "edit",
        "Successfully replaced 2 block(s) in wordfreq.py.",
        details=_edit_details("wordfreq.py", WORDFREQ_V2, WORDFREQ_V3),
    )
    _, call = w.assistant(None, ("bash", {"command": "python -m pytest -q"}), after=3)
    w.bash(call, PYTEST_PASSED, 0)
    w.assistant(
        "Done: `python wordfreq.py --top 5 notes.txt` prints the five most frequent words "
        "(3 without the option). The tests still pass.",
        after=5,
    )

    _compact(store, kept)

    # A failed reply, omitted from the context before the retry (as the agent does).
    w.user("Run it on README.md to check the output.", after=90)
    failed, _ = w.assistant(
        error="Rate limit reached for requests. Please try again in 2s.",
        after=3,
    )
    store.append_context_edit(failed, None)
    command = "python wordfreq.py --top 3 README.md"
    _, call = w.assistant("Running it on the README:", ("bash", {"command": command}), after=4)
    top = _top_words(README_MD, 3)
    w.bash(call, "\n".join(f"{count:5}  {word}" for word, count in top), 0)
    listed = ", ".join(f"**{word}** ({count})" for word, count in top)
    w.assistant(f"It works. The three most frequent words in `README.md` are {listed}.")


def _compact(store: SessionStore, first_kept: str) -> None:
    """A compaction as the compactor writes it (summary by the demo model's summarizer)."""
    projection = store.project()
    ids = projection.source_entry_ids
    cut = ids.index(first_kept)
    history = [m for m in projection.messages[:cut] if m.get("role") != "system"]
    ops = FileOps()
    ops.scan(history)
    read_files, modified_files = ops.lists()
    request = f"<conversation>\n{serialize_conversation(history)}\n</conversation>\n\n"
    summary = summary_reply(request) + format_file_operations(read_files, modified_files)
    tokens_before = int(projected_context_tokens(store, projection)["tokens"])
    store.append_compaction(
        summary,
        first_kept,
        tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
    )


# ------------------------------------------------------------------------------ the app


def demo_app_settings(settings: Settings | None = None) -> Settings:
    """The user's settings with the demo model's entries on top."""
    base = settings or Settings()
    merged = Settings.from_dict(deep_merge(base.to_dict(), demo_settings()), "the demo settings")
    merged.warnings[:0] = base.warnings
    return merged


def make_demo_app(
    session: Path,
    api_base: str,
    *,
    settings: Settings | None = None,
    cwd: Path | None = None,
    clock: Callable[[], float] = time.time,
) -> PituiApp:
    """The app on ``session`` with the demo model at ``api_base`` (no extensions)."""
    merged = demo_app_settings(settings)
    store = SessionStore.open(session)

    def agent_factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s, cwd=s.cwd or cwd, model=DEMO_MODEL, api_base=api_base, settings=merged
        )

    return PituiApp(
        store,
        agent_factory=agent_factory,
        settings=merged,
        cwd=cwd or store.cwd or None,
        clock=clock,
        session_folder=session.parent,
        demo=True,
        status_note="Demo mode: an offline demo model and a temporary example session.",
    )


def run_demo(settings: Settings) -> int:
    """Open the example session with the demo model; everything is removed on exit."""
    server = DemoModelServer().start()
    try:
        with tempfile.TemporaryDirectory(prefix="pitui-demo-") as tmp:
            root = Path(tmp)
            project = write_demo_project(root / "wordfreq")
            session = build_demo_session(root / "sessions", project)
            app = make_demo_app(session, server.api_base, settings=settings, cwd=project)
            code = app.run()
    finally:
        server.stop()
    sys.stdout.flush()
    return int(code or 0)
