"""Exports of a session: a self-contained HTML page (the tree, or only the active branch), the
active branch as Markdown, or the active branch as JSONL (a session file pi and pitui open).

Everything from the session is untrusted: the HTML page never executes or parses it as markup
(:mod:`pitui.export.html_page`), the Markdown has escape sequences removed and HTML neutralized.
Export files are written atomically and are private (0600).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pitui.export.files import write_private
from pitui.session.store import SessionStore

FORMATS = ("html", "md", "jsonl")
SUFFIXES = {"html": ".html", "md": ".md", "jsonl": ".jsonl"}


@contextmanager
def leaf_at(store: SessionStore, leaf_id: str | None) -> Iterator[SessionStore]:
    """The store with its leaf at ``leaf_id`` for the duration (``None``: as it is)."""
    if leaf_id is None or leaf_id == store.leaf_id:
        yield store
        return
    before = store.leaf_id
    store.branch(leaf_id)
    try:
        yield store
    finally:
        if before is None:
            store.reset_leaf()
        else:
            store.branch(before)


def render_jsonl(store: SessionStore) -> bytes:
    """The header and the entries of the active branch, each line as stored."""
    lines = [json.dumps(store.header, ensure_ascii=False, separators=(",", ":")).encode()]
    lines += [store.raw_line(n) for n in store.path_to()]
    return b"\n".join(lines) + b"\n"


def render(
    store: SessionStore, fmt: str, *, leaf_id: str | None = None, branch_only: bool = False
) -> bytes:
    """The export's bytes. ``jsonl`` and ``md`` always hold the active branch (at ``leaf_id``)."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export format {fmt!r}: use one of {', '.join(FORMATS)}.")
    with leaf_at(store, leaf_id):
        if fmt == "html":
            from pitui.export.html_page import render_html

            return render_html(store, branch_only=branch_only)
        if fmt == "md":
            from pitui.export.markdown import render_markdown

            return render_markdown(store).encode("utf-8", errors="replace")
        return render_jsonl(store)


def default_name(store: SessionStore, fmt: str) -> str:
    stem = store.path.stem if store.path else f"session-{store.session_id[:8]}"
    return stem + SUFFIXES[fmt]


def export_session(
    store: SessionStore,
    path: Path,
    fmt: str,
    *,
    leaf_id: str | None = None,
    branch_only: bool = False,
) -> int:
    """Write the export to ``path`` (0600); returns its size in bytes."""
    data = render(store, fmt, leaf_id=leaf_id, branch_only=branch_only)
    write_private(path, data)
    return len(data)


def export_html(store: SessionStore, path: Path, *, branch_only: bool = False) -> None:
    export_session(store, path, "html", branch_only=branch_only)


def export_jsonl(store: SessionStore, path: Path) -> None:
    export_session(store, path, "jsonl")


def export_markdown(store: SessionStore, path: Path) -> None:
    export_session(store, path, "md")
