"""Pilot tests for the tree browser's details pane (``DetailsPane``)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support.fixtures import copy_fixture
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Button, Collapsible, OptionList, Static, Tab

from pitui.compaction.tiktoken_count import TiktokenEstimator
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.widgets.inspector_views import CompactionView, ContextView
from pitui.ui.widgets.inspectors import (
    TABS,
    CompactionDetails,
    ContextDetails,
    ContextRow,
    DetailsPane,
    DetailsTab,
    EntryDetails,
    TabOptions,
    build_compaction_view,
    build_context_view,
    entry_body,
    entry_meta,
)
from pitui.ui.widgets.markdown_view import MarkdownView

COMPACTION = "pi-v3-compaction-and-system-prompt.jsonl"
CONTEXT_EDIT = "pi-v3-context-edit.jsonl"

NASTY = "[bold]not bold[/] and [x[0]] and [/ and [link=x]y[/link]"
ESCAPES = "osc\x1b]0;evil title\x07 clear\x1b[2J bell\x07 dcs\x1bPq#0\x1b\\ done"


class PaneApp(App[None]):
    """A tiny app around one ``DetailsPane``; records ``JumpTo`` messages."""

    def __init__(self, store: SessionStore, **pane_kwargs: Any) -> None:
        super().__init__()
        self.store = store
        self.agent = None
        self.jumps: list[str] = []
        self.pane_kwargs: dict[str, Any] = {"debounce": 0, "tiktoken": False, **pane_kwargs}

    def compose(self) -> ComposeResult:
        yield DetailsPane(id="details", **self.pane_kwargs)

    @on(DetailsPane.JumpTo)
    def record_jump(self, event: DetailsPane.JumpTo) -> None:
        self.jumps.append(event.entry_id)


def open_fixture(name: str, tmp_path: Path) -> SessionStore:
    """A read-only store over a private copy of a session fixture."""
    return SessionStore.open(copy_fixture(name, tmp_path / "fixtures"), read_only=True)


def text_of(static: Static) -> str:
    content = static.content
    return content.plain if isinstance(content, Content) else str(content)


def option_texts(pane: DetailsPane) -> list[str]:
    rows = pane.query_one("#context-rows", OptionList)
    texts = []
    for option in rows.options:
        prompt = option.prompt
        texts.append(prompt.plain if isinstance(prompt, Content) else str(prompt))
    return texts


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    workers = [w for w in pilot.app.workers if w.group == "details-tiktoken"]
    if workers:  # (an empty list would mean every worker of the app)
        await pilot.app.workers.wait_for_complete(workers)
    await pilot.pause()


async def show(pilot: Pilot[Any], entry_id: str | None, tab: str | None = None) -> DetailsPane:
    pane = pilot.app.query_one(DetailsPane)
    if tab is not None:
        pane.set_tab(tab)
        await pilot.pause()
    pane.show(entry_id)
    await settle(pilot)
    return pane


def context_view(pane: DetailsPane) -> ContextView | None:
    """The context the Context tab shows (``None``: not built)."""
    return pane.query_one(ContextDetails).view


def compaction_view(pane: DetailsPane) -> CompactionView | None:
    """The compaction the Compaction tab shows (``None``: none on the path)."""
    return pane.query_one(CompactionDetails).view


def message_ids(rows: list[ContextRow]) -> list[str]:
    return [row.entry_id for row in rows if row.kind == "message"]


# ----------------------------------------------------------------------------- context tab


async def test_context_before_and_after_a_compaction(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, "a1aaae2a", "context")
        before = context_view(pane)
        assert before is not None and before.entry_id == "a1aaae2a"
        assert before.projection.compaction_id is None
        ids_before = message_ids(before.rows)
        assert ids_before == before.projection.source_entry_ids
        assert ids_before[:2] == ["896d5d96", "34bc9a20"]
        assert not any("compaction" in row.markers for row in before.rows)
        assert not any("earlier entries summarized" in text for text in option_texts(pane))

        pane = await show(pilot, "8beea7e2")
        after = context_view(pane)
        assert after is not None and after.projection.compaction_id == "2f2988c4"
        ids_after = message_ids(after.rows)
        assert ids_after == after.projection.source_entry_ids
        assert ids_after != ids_before
        assert "34bc9a20" not in ids_after  # summarized away
        # The checkpoint then the summary come from the compaction entry, then the kept range.
        assert [r.markers for r in after.rows[:3]] == [("checkpoint",), ("compaction",), ("kept",)]
        assert after.rows[1].role == "summary"
        assert after.rows[2].entry_id == "37fbaff7"
        assert after.rows[1].note.startswith("19 earlier entries summarized")
        texts = option_texts(pane)
        summary = next(t for t in texts if "earlier entries summarized" in t)
        assert "19 earlier entries summarized" in summary
        assert "2,466 tokens before" in summary
        assert "## Goal" in summary
        # Entries after the compaction are not marked kept.
        assert after.rows[-1].entry_id == "8beea7e2" and after.rows[-1].markers == ()
        head = text_of(pane.query_one("#context-head", Static))
        assert "compacted at 2f2988c4" in head


async def test_context_header_tokens_against_the_window(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store, context_window=10_000).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, "0b455017", "context")
        view = context_view(pane)
        assert view is not None
        head = text_of(pane.query_one("#context-head", Static))
        assert f"{view.used:,} / 10,000 tokens" in head
        assert "tiktoken off" in head
        # chars/4: the folded system prompt once plus every other projected message.
        system_rows = [r for r in view.rows if r.role == "system"]
        others = sum(r.tokens or 0 for r in view.rows if r.role != "system")
        assert view.estimate == view.system_tokens + others
        assert system_rows and f"{view.estimate:,}" in head
        # The system prompt: sections (collapsible) and the tool list.
        system = pane.query_one("#context-system", Collapsible)
        assert "5 sections" in str(system.title) and "4 tools" in str(system.title)
        sections = [str(c.title) for c in system.query(".-section").results(Collapsible)]
        assert [s.split(" · ")[0] for s in sections] == [
            "preamble",
            "tools",
            "rules",
            "docs",
            "cwd",
        ]
        tools = text_of(pane.query_one(".-tools", Static))
        for name in ("read", "bash", "edit", "write"):
            assert f"\n{name} — " in tools


async def test_context_window_from_the_session_model_or_unknown(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, "0b455017", "context")
        assert context_view(pane) is not None
        assert context_view(pane).model_name == "anthropic/claude-sonnet-4-5"
        assert context_view(pane).window  # from litellm's table
    bare = SessionStore.in_memory(str(tmp_path))
    user = bare.append_message({"role": "user", "content": "hi", "timestamp": 1})
    async with PaneApp(bare).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, user, "context")
        head = text_of(pane.query_one("#context-head", Static))
        assert "tokens / unknown window" in head and "unknown model" in head


async def test_context_edit_markers(tmp_path: Path) -> None:
    store = open_fixture(CONTEXT_EDIT, tmp_path)
    async with PaneApp(store).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, "bbdd7c2f", "context")
        view = context_view(pane)
        assert view is not None
        omitted = {r.entry_id: r for r in view.rows if r.kind == "omitted"}
        assert set(omitted) == {"9c90b99b", "b1d4677f"}
        assert omitted["9c90b99b"].note == "by 47f9fb05"
        assert omitted["b1d4677f"].markers == ("omitted",)
        # Omitted rows stay in path order, between their neighbours.
        order = [r.entry_id for r in view.rows]
        assert order.index("3f4e6434") < order.index("9c90b99b") < order.index("20637a23")
        edited = {r.entry_id: r for r in view.rows if "edited" in r.markers}
        assert set(edited) == {"d09da2f1", "6a26f277", "4586c6a2", "1af5e7a8", "fdfaaf75"}
        assert edited["4586c6a2"].note == "by 7f4e0b12"  # the latest edit wins
        assert "latest edit of three wins" in edited["4586c6a2"].preview
        texts = option_texts(pane)
        assert sum("omitted" in t for t in texts) == 2
        assert sum("edited" in t for t in texts) == 5
        assert any("edited (by 585b956e) Edited question two" in t for t in texts)

        # On the side branch only that branch's edit applies; nothing is omitted.
        pane = await show(pilot, "9e514d3a")
        side = context_view(pane)
        assert side is not None
        assert not [r for r in side.rows if r.kind == "omitted"]
        assert [(r.entry_id, r.note) for r in side.rows if "edited" in r.markers] == [
            ("d09da2f1", "by 7b8f7406")
        ]

        # After the compaction, an edited kept entry is both kept and edited.
        pane = await show(pilot, "0179b3cd")
        late = context_view(pane)
        assert late is not None
        kept_edited = [r for r in late.rows if r.markers == ("kept", "edited")]
        assert [r.entry_id for r in kept_edited] == ["1af5e7a8", "fdfaaf75"]


async def test_context_rows_capped_with_show_more_and_jump(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store, row_cap=5).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, "0b455017", "context")
        rows = pane.query_one("#context-rows", OptionList)
        view = context_view(pane)
        assert view is not None and len(view.rows) > 10
        assert rows.option_count == 1 + 5 + 1  # header, rows, "show more"
        assert option_texts(pane)[-1].startswith(f"Show 5 more ({len(view.rows) - 5} not shown)")
        rows.focus()
        rows.highlighted = rows.option_count - 1
        await pilot.press("enter")
        await pilot.pause()
        assert rows.option_count == 1 + 10 + 1
        # Selecting a message row asks to jump to its entry.
        rows.highlighted = 2
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.jumps == [view.rows[1].entry_id]  # type: ignore[attr-defined]


async def test_tiktoken_counts_fill_in_from_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    threads: list[str] = []
    original = TiktokenEstimator.count_projection

    def slow(self: TiktokenEstimator, projection: Any) -> tuple[int, list[int]]:
        threads.append(threading.current_thread().name)
        release.wait(10)
        return original(self, projection)

    monkeypatch.setattr(TiktokenEstimator, "count_projection", slow)
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store, tiktoken=True).run_test(size=(110, 40)) as pilot:
        pane = pilot.app.query_one(DetailsPane)
        pane.set_tab("context")
        await pilot.pause()
        pane.show("0b455017")
        await pilot.pause()
        head = pane.query_one("#context-head", Static)
        assert "tiktoken counting…" in text_of(head)
        assert all(t.split()[2] == "…" for t in option_texts(pane)[1:])
        release.set()
        await settle(pilot)
        assert threads and threads[0] != threading.main_thread().name
        view = context_view(pane)
        assert view is not None
        total, per = original(TiktokenEstimator.for_model(view.model_name), view.projection)
        assert f"tiktoken {total:,} (cl100k_base)" in text_of(head)
        first_row = option_texts(pane)[1]
        assert first_row.split()[2] == f"{per[0]:,}"
        # Cached: showing it again does not count again.
        pane.show("a1aaae2a")
        await settle(pilot)
        pane.show("0b455017")
        await settle(pilot)
        assert len(threads) == 2


async def test_show_is_debounced_and_only_the_visible_tab_is_built(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store, debounce=0.5).run_test(size=(110, 40)) as pilot:
        pane = pilot.app.query_one(DetailsPane)
        for entry_id in ("34bc9a20", "818c62b9", "43e751f2", "d59fd00a"):
            pane.show(entry_id)
        # The first call after a pause applies at once; the burst that follows waits.
        assert pane.entry_id == "34bc9a20"
        assert "34bc9a20" in text_of(pane.query_one("#entry-meta", Static))
        await pilot.pause(0.7)
        assert pane.entry_id == "d59fd00a"
        assert "d59fd00a" in text_of(pane.query_one("#entry-meta", Static))
        assert context_view(pane) is None  # the context tab is not visible: not built
        pane.set_tab("context")
        await pilot.pause(0.1)
        assert context_view(pane) is not None and context_view(pane).entry_id == "d59fd00a"
        assert pane.active_tab == "context"
        # Going back to the entry tab does not rebuild it (nothing changed).
        meta = pane.query_one("#entry-meta", Static)
        before = meta.content
        pane.set_tab("entry")
        await pilot.pause(0.1)
        assert meta.content is before


# ----------------------------------------------------------------------------- compaction tab


async def test_compaction_tab_values_and_jump(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store).run_test(size=(110, 50)) as pilot:
        pane = await show(pilot, "6612458f", "compaction")
        view = compaction_view(pane)
        assert view is not None and view.compaction_id == "97c1ae73" and not view.is_entry
        head = text_of(pane.query_one("#compaction-head", Static))
        assert "Compaction 97c1ae73" in head and "latest on the path to 6612458f" in head
        facts = text_of(pane.query_one("#compaction-facts", Static))
        assert "2,179 before" in facts
        assert f"~{view.tokens_after:,} after" in facts and view.tokens_after > 0
        assert "a1aaae2a" in facts
        assert "input 1,391 · output 115" in facts and "fromHook   no" in facts
        files = text_of(pane.query_one("#compaction-files", Static))
        assert "read files (4)" in files and "src/pitui/session/jsonl.py" in files
        assert "modified files (1)" in files and "/etc/hosts" in files
        await pilot.click("#jump-first-kept")
        await pilot.pause()
        assert pilot.app.jumps == ["a1aaae2a"]  # type: ignore[attr-defined]
        # The key works when the pane has focus.
        pane.query_one("#jump-first-kept", Button).focus()
        await pilot.press("j")
        await pilot.pause()
        assert pilot.app.jumps == ["a1aaae2a", "a1aaae2a"]  # type: ignore[attr-defined]

        # The first compaction, shown on itself.
        pane = await show(pilot, "2f2988c4")
        first = compaction_view(pane)
        assert first is not None and first.is_entry and first.first_kept == "37fbaff7"
        assert "this entry" in text_of(pane.query_one("#compaction-head", Static))
        assert "2,466 before" in text_of(pane.query_one("#compaction-facts", Static))
        assert "modified files (0)" in text_of(pane.query_one("#compaction-files", Static))

        # Before any compaction.
        pane = await show(pilot, "34bc9a20")
        assert compaction_view(pane) is None
        assert text_of(pane.query_one("#compaction-head", Static)) == (
            "No compaction on the path to 34bc9a20."
        )
        assert not pane.query_one("#jump-first-kept", Button).display
        assert pane.query_one(CompactionDetails).jump_to_first_kept() is False


# ----------------------------------------------------------------------------- entry tab


async def test_entry_tab_shows_the_whole_assistant_message(tmp_path: Path) -> None:
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store).run_test(size=(110, 50)) as pilot:
        pane = await show(pilot, "37fbaff7", "entry")
        meta = text_of(pane.query_one("#entry-meta", Static))
        assert "id         37fbaff7" in meta and "parent     c039c7ff" in meta
        assert "type       message · assistant" in meta
        assert "model      anthropic/claude-sonnet-4-5" in meta
        assert "total 1,729" in meta and "$0.006111" in meta and "stopReason toolUse" in meta
        body = text_of(pane.query_one("#entry-body", Static))
        assert "thinking\nWidget assert section tool input" in body
        assert "tool call · edit · toolu_07_0006" in body
        assert '"oldText": "scroll = queue"' in body
        assert body.count("tool call · ") == 3
        raw = pane.query_one("#entry-raw", Collapsible)
        assert raw.collapsed and text_of(pane.query_one("#entry-raw-text", Static)) == ""
        raw.collapsed = False
        await pilot.pause()
        assert '"thinkingSignature": "sig_548956"' in text_of(
            pane.query_one("#entry-raw-text", Static)
        )


def untrusted_session(tmp_path: Path) -> tuple[SessionStore, dict[str, str]]:
    store = SessionStore.in_memory(str(tmp_path))
    ids: dict[str, str] = {}
    ids["system"] = store.append_message(
        {
            "role": "system",
            "content": "",
            "sections": {"[bold]sec[/]": f"section {NASTY}"},
            "toolsAdded": [{"name": "[x[0]]", "description": NASTY, "parameters": {}}],
            "timestamp": 1,
        }
    )
    ids["user"] = store.append_message(
        {"role": "user", "content": [{"type": "text", "text": f"{NASTY} {ESCAPES}"}]}
    )
    ids["assistant"] = store.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": f"think {NASTY}"},
                {"type": "text", "text": f"say {NASTY} {ESCAPES}"},
                {"type": "toolCall", "id": "c[1]", "name": "[b]bash", "arguments": {"x": NASTY}},
            ],
            "provider": "[red]p",
            "model": "m[/]",
            "usage": {"input": 1, "output": 2, "totalTokens": 3},
            "stopReason": "error",
            "errorMessage": f"boom {NASTY}",
        }
    )
    ids["tool"] = store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c[1]",
            "toolName": "[b]bash",
            "content": [{"type": "text", "text": f"\x1b[31mred\x1b[0m {NASTY} {ESCAPES}"}],
            "isError": True,
        }
    )
    ids["compaction"] = store.append_compaction(
        f"## Goal\n{NASTY}\n\n{ESCAPES}",
        ids["user"],
        1234,
        details={"readFiles": [NASTY], "modifiedFiles": [f"file{ESCAPES}"]},
    )
    ids["custom"] = store.append_custom_message("[b]note", f"custom {NASTY}")
    ids["edit"] = store.append_context_edit(ids["user"], {"content": f"edited {NASTY}"})
    store.append_label(ids["custom"], f"label {NASTY}")
    return store, ids


def visible_text(pane: DetailsPane) -> str:
    parts = [
        text_of(s)
        for s in pane.query(Static)
        if not isinstance(s, Button) and s.id != "entry-raw-text"
    ]
    parts += option_texts(pane)
    parts += [str(c.title) for c in pane.query(Collapsible)]
    parts += [view.text for view in pane.query(MarkdownView)]
    return "\n".join(parts)


async def test_untrusted_text_is_shown_literally(tmp_path: Path) -> None:
    store, ids = untrusted_session(tmp_path)
    async with PaneApp(store).run_test(size=(120, 60)) as pilot:
        pane = pilot.app.query_one(DetailsPane)
        for tab in ("entry", "context", "compaction"):
            pane.set_tab(tab)
            for name, entry_id in ids.items():
                pane = await show(pilot, entry_id)
                if tab == "entry":
                    pane.query_one("#entry-raw", Collapsible).collapsed = False
                await pilot.pause()
                text = visible_text(pane)
                assert "\x1b" not in text and "\x07" not in text, (name, tab)
                assert "evil title" not in text, (name, tab)
                if tab != "compaction" or name != "system":
                    assert NASTY in text, (name, tab)
                if tab == "entry":  # raw JSON: escapes as inert \u001b text
                    raw = text_of(pane.query_one("#entry-raw-text", Static))
                    assert NASTY in raw and "\x1b" not in raw and "\x07" not in raw
        pane = await show(pilot, ids["tool"], "entry")
        body = pane.query_one("#entry-body", Static)
        assert f"red {NASTY} osc clear bell dcs done" in text_of(body)
        # The SGR colour survives as a style; nothing else does.
        content = body.content
        assert isinstance(content, Content)
        red_at = content.plain.index("red ")
        assert any(s.start <= red_at < s.end for s in content.spans if "red" in str(s.style))
        meta = text_of(pane.query_one("#entry-meta", Static))
        assert "type       message · toolResult" in meta

        pane = await show(pilot, ids["assistant"], "entry")
        meta = text_of(pane.query_one("#entry-meta", Static))
        assert "model      [red]p/m[/]" in meta
        body_text = text_of(pane.query_one("#entry-body", Static))
        assert f"error: boom {NASTY}" in body_text
        assert "tool call · [b]bash · c[1]" in body_text

        pane = await show(pilot, ids["custom"], "entry")
        assert f"label      label {NASTY}" in text_of(pane.query_one("#entry-meta", Static))

        pane = await show(pilot, ids["edit"], "context")
        system = pane.query_one("#context-system", Collapsible)
        system.collapsed = False
        await pilot.pause()
        sections = [str(c.title) for c in system.query(".-section").results(Collapsible)]
        tokens = math.ceil(len(f"section {NASTY}") / 4)
        assert sections == [f"[bold]sec[/] · {tokens} tokens"]
        assert "[x[0]] — " in text_of(pane.query_one(".-tools", Static))
        rows = option_texts(pane)
        assert any(f"edited (by {ids['edit']}) edited {NASTY}" in row for row in rows)
        assert any(f"say {NASTY} osc clear bell dcs done" in row for row in rows)

        pane = await show(pilot, ids["edit"], "compaction")
        files = text_of(pane.query_one("#compaction-files", Static))
        assert f"  {NASTY}\n" in files and "fileosc clear bell dcs done" in files
        summary = pane.query_one("#compaction-summary", MarkdownView)
        assert summary.source == f"## Goal\n{NASTY}\n\nosc clear bell dcs done"
        # Rendered as Markdown (the heading's marks gone), the markup in it as written.
        assert summary.text.split("\n") == ["Goal", "", NASTY, "", "osc clear bell dcs done"]


# ----------------------------------------------------------------------------- a new tab


class TypeTab(DetailsTab):
    """A tab as small as one can be: the highlighted entry's type (a test registers it)."""

    key = "type"
    title = "Type"

    def __init__(self, options: TabOptions | None = None, *, id: str | None = None) -> None:
        super().__init__(options, id=id)
        self.shown: list[str | None] = []
        self.forgotten = 0

    def compose(self) -> ComposeResult:
        yield Static(Content(""), id="type-text", markup=False)

    def show(self, entry_id: str | None) -> None:
        self.entry_id = entry_id
        self.shown.append(entry_id)
        entry = self.pitui.store.find(entry_id) if entry_id is not None else None
        text = "Nothing selected." if entry is None else f"{entry_id} is a {entry['type']}"
        self.query_one("#type-text", Static).update(Content(text))

    def forget(self) -> None:
        self.forgotten += 1


async def test_a_registered_tab_is_shown_switched_to_by_its_key_and_cleared(
    tmp_path: Path,
) -> None:
    tabs = TABS.copy()
    tabs.register(TypeTab)
    store = open_fixture(COMPACTION, tmp_path)
    async with PaneApp(store, tabs=tabs).run_test(size=(110, 40)) as pilot:
        pane = await show(pilot, "2f2988c4")
        tab = pane.query_one(TypeTab)
        labels = [str(t.label) for t in pane.query(Tab)]
        assert labels == ["Entry", "Context", "Compaction", "Files", "Type"]
        assert tab.shown == []  # not visible: not built

        pane.set_tab("type")
        await pilot.pause()
        assert pane.active_tab == "type" and pane.tab("type") is tab
        assert tab.shown == ["2f2988c4"]
        assert text_of(tab.query_one("#type-text", Static)) == "2f2988c4 is a compaction"

        pane = await show(pilot, "a1aaae2a")  # the visible tab follows the tree
        assert text_of(tab.query_one("#type-text", Static)) == "a1aaae2a is a message"
        pane = await show(pilot, None)  # nothing highlighted: cleared
        assert text_of(tab.query_one("#type-text", Static)) == "Nothing selected."

        pane.refresh_entry()  # a label changed: every tab forgets, the visible one shows again
        await pilot.pause()
        assert tab.forgotten == 1 and tab.shown == ["2f2988c4", "a1aaae2a", None, None]

        await pilot.click("#details Tab#--content-tab-tab-entry")  # the tab bar switches too
        await pilot.pause()
        assert pane.active_tab == "entry"
    assert "type" not in TABS  # the app's own registry is unchanged


def test_the_registry_refuses_what_the_pane_could_not_show() -> None:
    tabs = TABS.copy()
    with pytest.raises(ValueError, match="Two details tabs are called 'entry'"):
        tabs.register(EntryDetails)

    class Unnamed(DetailsTab):
        title = "Unnamed"

    with pytest.raises(ValueError, match="key must be a lowercase name"):
        tabs.register(Unnamed)
    with pytest.raises(ValueError, match="Unknown details tab 'nope': use one of entry, context"):
        DetailsPane(tab="nope")
    assert TABS.keys == ("entry", "context", "compaction", "files")


# ----------------------------------------------------------------------------- inside PituiApp


class DetailsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        yield DetailsPane(id="details", tab="context", debounce=0, tiktoken=False)


async def test_inside_pitui_app_with_an_agent(app_factory: Callable[..., PituiApp]) -> None:
    app = app_factory(COMPACTION)
    async with app.run_test(size=(110, 40)) as pilot:
        await app.push_screen(DetailsScreen())
        await pilot.pause()
        pane = app.screen.query_one(DetailsPane)
        assert pane.active_tab == "context"
        pane.show("8beea7e2")
        await settle(pilot)
        view = context_view(pane)
        assert view is not None
        # The agent's model is unknown to litellm: its name is used, the window comes from the
        # session's model.
        assert view.model_name == "openai/test-model"
        assert view.window
        assert view.projection.compaction_id == "2f2988c4"


# ----------------------------------------------------------------------------- every entry


@pytest.mark.parametrize(
    "name",
    [
        COMPACTION,
        CONTEXT_EDIT,
        "pi-v3-branches.jsonl",
        "pi-v3-branch-summary.jsonl",
        "pi-v3-labels-and-names.jsonl",
        "pi-v1-before-compaction.jsonl",
    ],
)
def test_every_fixture_entry_builds(name: str, tmp_path: Path) -> None:
    """Every entry of every fixture gives an entry view, a context view and a compaction view
    that agree with the store's projection (no Textual needed)."""
    store = open_fixture(name, tmp_path)
    nodes = list(store.nodes())
    for node in nodes[:: max(1, len(nodes) // 100)]:  # about 100 entries of the large one
        entry = store.data(node)
        assert entry_meta(entry).plain.startswith(f"id         {node.id}")
        assert entry_body(entry).plain
        view = build_context_view(store, node.id, window=1000)
        projection = store.project(node.id)
        assert message_ids(view.rows) == projection.source_entry_ids
        omitted = {r.entry_id for r in view.rows if r.kind == "omitted"}
        assert omitted == {
            target
            for target, edit in projection.edits.items()
            if store.get(edit).get("replacement") is None
        }
        compaction = build_compaction_view(store, node.id)
        assert (compaction.compaction_id if compaction else None) == projection.compaction_id
