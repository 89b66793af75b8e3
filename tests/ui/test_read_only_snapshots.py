"""Snapshots at 80x24 of the read-only second view (banner and the refusal of a write) and of
the question for a session whose working directory is gone (long paths wrap, never clip).

Synchronous on purpose: ``snap_compare`` runs its own event loop. The holder's pid is fixed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fixture, make_app
from textual.pilot import Pilot

from pitui.session import SessionStore
from pitui.ui.widgets.prompt import PromptEditor

SIZE = (80, 24)
HERE = "/home/user/work/a-rather-long-project-directory-name/checkout"


@pytest.fixture
def held_store(tmp_path: Path) -> Iterator[SessionStore]:
    path = copy_fixture("pi-v3-branches.jsonl", tmp_path)
    holder = SessionStore.open(path)
    store = SessionStore.open(path)
    assert store.held_elsewhere
    store.holder = "pid 4242"
    store.read_only_reason = (
        "This session is open in another pitui (pid 4242), so it is open read-only here."
    )
    try:
        yield store
    finally:
        store.close()
        holder.close()


def test_read_only_banner_and_refused_prompt(snap_compare: Any, held_store: SessionStore) -> None:
    app = make_app(held_store, cwd=HERE)

    async def prompt(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        app.clear_notifications()
        pilot.app.screen.query_one(PromptEditor).text = "hello"
        await pilot.press("enter")
        for _ in range(5):
            await pilot.pause(0.02)

    assert snap_compare(app, terminal_size=SIZE, run_before=prompt)


def test_missing_working_directory_question(snap_compare: Any, tmp_path: Path) -> None:
    store = SessionStore.open(copy_fixture("pi-v3-branches.jsonl", tmp_path))
    assert store.stored_cwd_missing
    app = make_app(store, cwd=HERE, ask_missing_cwd=True)

    async def settle(pilot: Pilot[Any]) -> None:
        for _ in range(5):
            await pilot.pause(0.02)

    assert snap_compare(app, terminal_size=SIZE, run_before=settle)
