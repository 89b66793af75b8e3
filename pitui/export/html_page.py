"""The HTML export: one self-contained page (no network, a strict CSP, nothing from the session
ever executed).

The session's data is JSON (``<``, ``>``, ``&``, U+2028/9 escaped), compressed with zlib and
put in base64 in a ``<script type="application/octet-stream">`` block: never run, and base64
cannot close the block. It is also 3-5 times smaller, and the browser unpacks it natively
(``DecompressionStream``) faster than it would parse the raw JSON text in the page. The page's
own script, allowed by its hash alone, renders it with DOM APIs. The session's own JSONL lines
travel the same way in a second block, for the page's download button (a Blob of those bytes,
never parsed by the page). Trusted Types are required
with no policy, so even a bug that assigned a string to ``innerHTML`` would throw instead of
parsing markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import zlib
from datetime import UTC, datetime
from importlib import resources

from pitui.export.view import js_safe_json, page_data
from pitui.session.store import SessionStore

COMPRESSION = 3
_SKELETON = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="pitui">
<title>pitui export</title>
<style>{css}</style>
</head><body>
<header id="top"><h1 id="title"></h1><span class="totals" id="totals"></span>\
<label><input type="checkbox" id="show-thinking" checked>thinking</label>\
<label><input type="checkbox" id="show-output" checked>tool output</label>\
<button id="download" type="button" title="The session file ({jsonl_what})">Download JSONL</button>\
<button id="stats-button" type="button">Statistics</button></header>
<aside id="side"><div id="controls"><input id="search" type="search" \
placeholder="Search (every word)" aria-label="Search the tree" autocomplete="off">\
<select id="filter" aria-label="Filter"></select></div><div id="count"></div>\
<div id="tree" tabindex="0" role="tree" aria-label="Session tree"></div></aside>
<main id="main"></main>
<div id="stats" hidden></div>
<script type="application/octet-stream" id="pitui-data">{data}</script>
<script type="application/octet-stream" id="pitui-jsonl" data-name="{jsonl_name}">{jsonl}</script>
<script>{js}</script>
</body></html>
"""


def _asset(name: str) -> str:
    return resources.files("pitui.export").joinpath("assets", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def content_security_policy(js: str, css: str) -> str:
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src '{_sha256(js)}'",
            f"style-src '{_sha256(css)}'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
            "require-trusted-types-for 'script'",
            "trusted-types 'none'",
        ]
    )


def _pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, COMPRESSION)).decode("ascii")


def session_lines(store: SessionStore, *, branch_only: bool = False) -> bytes:
    """The session as a JSONL file, each entry's line as stored: every entry in file order,
    or (``branch_only``) the active branch, as ``pitui export --format jsonl`` writes it."""
    from pitui.export import render_jsonl

    if branch_only:
        return render_jsonl(store)
    lines = [json.dumps(store.header, ensure_ascii=False, separators=(",", ":")).encode()]
    lines += [store.raw_line(node) for node in store.nodes()]
    return b"\n".join(lines) + b"\n"


def render_html(store: SessionStore, *, branch_only: bool = False) -> bytes:
    """The page for the store's current leaf (the whole tree, or only the active branch), with
    the session's own lines embedded for the page's JSONL download."""
    from pitui.export import default_name

    exported_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    data = js_safe_json(page_data(store, branch_only=branch_only, exported_at=exported_at))
    js, css = _asset("page.js"), _asset("page.css")
    if "</" in js or "</" in css:  # pragma: no cover - a broken asset, caught by the tests
        raise ValueError("an export asset contains '</'")
    page = _SKELETON.format(
        csp=content_security_policy(js, css),
        css=css,
        data=_pack(data.encode("utf-8")),
        jsonl=_pack(session_lines(store, branch_only=branch_only)),
        # An attribute value, HTML-escaped: the name comes from the session file's name.
        jsonl_name=html.escape(default_name(store, "jsonl"), quote=True),
        jsonl_what="the active branch" if branch_only else "every entry",
        js=js,
    )
    return page.encode("utf-8")
