"""The HTML export keeps everything inert: hostile message text never runs in a browser.

Checked in headless Chromium after every node's conversation has been rendered: the payloads
are in the DOM as text only (no injected elements, no attribute set by a payload, no script
error, no request). Under CI=true the test fails rather than
skips when Chromium is missing (.ci/run installs it).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import sys
import zlib
from pathlib import Path

import pytest

from pitui.export import export_html, export_jsonl
from pitui.session import SessionStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.chromium import Chromium

PAYLOADS = [
    "<script>document.body.setAttribute('data-pwned', 'script')</script>",
    "\"><img src=x onerror=\"document.body.setAttribute('data-pwned', 'img')\">",
    "</pre></details><svg onload=\"document.body.setAttribute('data-pwned', 'svg')\">",
    "[bold]not markup[/] [x[0]] \x1b[31mred\x1b[0m \x1b]0;title\x07",
]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def hostile_session(tmp_path: Path) -> SessionStore:
    store = SessionStore.create(tmp_path / "s", str(tmp_path / "<b>cwd</b>"))
    store.append_session_info("<script>alert(1)</script> name")
    for payload in PAYLOADS:
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": payload}], "timestamp": 1}
        )
        store.append_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": payload},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "read",
                        "arguments": {"path": payload},
                    },
                ],
                "api": "litellm",
                "provider": "openai",
                "model": "m",
                "usage": {},
                "stopReason": "toolUse",
                "timestamp": 2,
            }
        )
        store.append_message(
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": payload}],
                "isError": False,
                "timestamp": 3,
            }
        )
    store.append_label(store.leaf_id or "", "<img src=x onerror=alert(2)>")
    return store


def test_export_html_keeps_every_payload_out_of_the_markup(tmp_path: Path) -> None:
    store = hostile_session(tmp_path)
    target = tmp_path / "out" / "export.html"
    export_html(store, target)
    page = target.read_text()
    # The session travels compressed in base64 inside a data block: no payload byte is markup.
    assert "<img" not in page and "<svg" not in page and "onerror" not in page
    assert page.count("<script") == 3 and "\x1b" not in page
    data = re.search(r'id="pitui-data">([^<]*)</script>', page)
    assert data is not None
    decoded = json.loads(zlib.decompress(base64.b64decode(data.group(1))))
    texts = json.dumps(decoded, ensure_ascii=False)
    assert "document.body.setAttribute('data-pwned', 'script')" in texts
    assert "\x1b" not in texts  # escape sequences removed from what is shown
    # The download block: the session's own lines, byte for byte, just as inert.
    jsonl = re.search(r'id="pitui-jsonl" data-name="[^"<>]*">([^<]*)</script>', page)
    assert jsonl is not None and store.path is not None
    assert zlib.decompress(base64.b64decode(jsonl.group(1))) == store.path.read_bytes()


def test_export_jsonl_is_the_active_branch_as_stored(tmp_path: Path) -> None:
    store = hostile_session(tmp_path)
    target = tmp_path / "branch.jsonl"
    export_jsonl(store, target)
    lines = target.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert len(lines) - 2 == len(store.path_to())
    assert lines[1:-1] == [store.raw_line(n) for n in store.path_to()]


MARKDOWN_PAYLOADS = [
    "[click](javascript:document.body.setAttribute('data-pwned','link'))",
    "![x](x) <iframe src=x></iframe> **<b onmouseover=alert(1)>bold</b>**",
    "```\n</code></pre><img src=x onerror=alert(1)>\n```",
    # Text built to make a naive Markdown parser quadratic: it must still render at once.
    "[" * 60_000 + "](x" + " *a" * 20_000 + " `" * 20_000 + " **b" * 10_000,
]


@pytest.mark.timeout(120)
def test_hostile_export_does_not_execute_in_chromium(tmp_path: Path) -> None:
    browser = chromium()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "Chromium is required under CI=true (.ci/run installs the chromium package)"
            )
        pytest.skip("chromium not installed")
    store = hostile_session(tmp_path)
    for payload in MARKDOWN_PAYLOADS:
        store.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": payload}], "usage": {},
             "stopReason": "stop", "timestamp": 4}
        )  # fmt: skip
    target = tmp_path / "export.html"
    export_html(store, target)
    with Chromium(browser, tmp_path / "profile", 1280, 800) as chrome:
        chrome.open(target.as_uri())
        chrome.pump(0.3)
        # Show every node's conversation once: every payload goes through the renderer.
        count = chrome.evaluate(
            "(() => { const f = document.getElementById('filter'); f.value = 'all';"
            " f.dispatchEvent(new Event('change'));"
            " const n = document.querySelectorAll('#tree .row').length;"
            " for (let k = 0; k < n; k++) document.querySelectorAll('#tree .row')[k].click();"
            " return n; })()"
        )
        assert count == len(store)
        last = chrome.evaluate("document.querySelector('#tree .row.sel').title.split(' ')[0]")
        assert last == store.leaf_id
        found = chrome.evaluate(
            "(() => ({pwned: document.body.hasAttribute('data-pwned'),"
            " injected: document.querySelectorAll('img:not(.inline), svg, iframe, b[onmouseover],"
            " script:not(#pitui-data):not(#pitui-jsonl)').length,"
            " scripts: document.scripts.length,"
            " badLinks: [...document.querySelectorAll('a')].filter(a =>"
            " !/^(https?:|mailto:|file:)/.test(a.href)).length,"
            " text: document.body.textContent}))()"
        )
        assert chrome.script_errors() == []
        assert [u for u in chrome.requests() if u != target.as_uri()] == []
    assert found["pwned"] is False
    assert found["injected"] == 1  # the page's own script
    assert found["scripts"] == 3 and found["badLinks"] == 0
    assert "<script>document.body.setAttribute('data-pwned', 'script')</script>" in found["text"]


@pytest.mark.timeout(120)
def test_a_hostile_file_name_and_content_download_as_bytes(tmp_path: Path) -> None:
    """The download's name comes from the session file's name and its bytes from the file:
    a name built to close the attribute and a line built to close the data block stay inert,
    and what is saved is the file exactly."""
    browser = chromium()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is required under CI=true")
        pytest.skip("chromium not installed")
    store = hostile_session(tmp_path)
    store.append_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "</script><script>document.title='pwned'</script>"}
            ],
            "timestamp": 5,
        }
    )
    assert store.path is not None
    source = store.path
    store.close()
    odd = tmp_path / "odd" / '"><img src=x onerror="document.title=1"> s.jsonl'
    odd.parent.mkdir()
    odd.write_bytes(source.read_bytes())
    target = tmp_path / "page.html"
    with SessionStore.open(odd, read_only=True) as copy:
        export_html(copy, target)
    page = target.read_text()
    assert page.count("<script") == 3
    escaped = "&quot;&gt;&lt;img src=x onerror=&quot;document.title=1&quot;&gt; s.jsonl"
    assert f'data-name="{escaped}"' in page and "<img" not in page
    with Chromium(browser, tmp_path / "profile", 1280, 800) as chrome:
        chrome.open(target.as_uri())
        name = chrome.evaluate("document.getElementById('pitui-jsonl').dataset.name")
        assert name == odd.name
        saved = chrome.download("document.getElementById('download').click()", tmp_path / "dl")
        assert saved.read_bytes() == odd.read_bytes()
        assert chrome.evaluate("document.scripts.length") == 3
        assert chrome.evaluate("document.querySelectorAll('img:not(.inline)').length") == 0
        assert chrome.evaluate("document.title") not in ("pwned", "1")
        assert chrome.script_errors() == []
        assert [u for u in chrome.requests() if u != target.as_uri()] == []
