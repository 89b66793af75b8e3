"""`/export` HTML escapes everything: hostile message text never runs in a browser.

Checked in headless Chromium: the page's DOM after load must contain the payloads as text only
(no injected elements, no attribute set by a payload). Under CI=true the test fails rather than
skips when Chromium is missing (.ci/run installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pitui.export import export_html, export_jsonl
from pitui.session import SessionStore

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


def test_export_html_escapes_every_payload(tmp_path: Path) -> None:
    store = hostile_session(tmp_path)
    target = tmp_path / "out" / "export.html"
    export_html(store, target)
    page = target.read_text()
    assert "<script" not in page and "<img" not in page and "<svg" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x onerror" in page
    assert "\x1b" not in page and "\\u001b[31m" in page  # escapes shown as text only


def test_export_jsonl_is_the_active_branch_as_stored(tmp_path: Path) -> None:
    store = hostile_session(tmp_path)
    target = tmp_path / "branch.jsonl"
    export_jsonl(store, target)
    lines = target.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert len(lines) - 2 == len(store.path_to())
    assert lines[1:-1] == [store.raw_line(n) for n in store.path_to()]


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
    target = tmp_path / "export.html"
    export_html(store, target)
    result = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=2000",
            "--dump-dom",
            target.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    dom = result.stdout
    assert "<body" in dom, result.stderr[-2000:]
    assert "data-pwned" not in dom.split("&lt;")[0]  # no payload set an attribute on <body>
    assert "data-pwned=" not in dom.replace("data-pwned', ", "")
    assert "<img" not in dom and "<svg" not in dom
    assert "<script" not in dom
    assert "&lt;script&gt;document.body.setAttribute" in dom
