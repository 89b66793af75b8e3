"""Exports: the whole tree as a self-contained HTML page, or the active branch as JSONL.

Everything from the session is HTML-escaped: messages, tool output and file names can never
become markup or script in the exported page.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from pitui.session import SessionStore
from pitui.session.flatten import flatten
from pitui.session.oneline import entry_text
from pitui.text import terminal_text

_STYLE = """
body { font: 14px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; color: #222; }
.row { white-space: pre-wrap; font-family: ui-monospace, monospace; }
.active { font-weight: bold; }
.leaf { background: #ffe; }
details { margin: .25rem 0 .25rem 2rem; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: .5rem; }
"""


def _write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)


def export_html(store: SessionStore, path: Path) -> None:
    """Every entry of every branch (the active path in bold), each expandable to its JSON."""
    title = store.session_name or f"pitui session {store.session_id}"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>cwd {html.escape(store.cwd)} · {len(store)} entries</p>",
    ]
    leaf = store.leaf_id
    for row in flatten(store, "all"):
        entry = store.data(row.node)
        label = store.label_of(row.node.id)
        text = terminal_text((f"[{label}] " if label else "") + entry_text(entry))
        classes = (
            "row" + (" active" if row.on_path else "") + (" leaf" if row.node.id == leaf else "")
        )
        body = json.dumps(entry, ensure_ascii=True, indent=2)  # controls become \u escapes
        parts.append(
            f"<details><summary class='{classes}'>{html.escape(row.gutter + row.connector)}"
            f"{html.escape(row.node.id)} {html.escape(text)}</summary>"
            f"<pre>{html.escape(body)}</pre></details>"
        )
    parts.append("</body></html>")
    _write(path, "\n".join(parts))


def export_jsonl(store: SessionStore, path: Path) -> None:
    """The header and the entries of the active branch, each line as stored."""
    lines = [json.dumps(store.header, ensure_ascii=False, separators=(",", ":"))]
    lines += [store.raw_line(n).decode("utf-8", errors="replace") for n in store.path_to()]
    _write(path, "\n".join(lines) + "\n")
