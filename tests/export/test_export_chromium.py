"""The HTML export in headless Chromium: no script error, no network request, the tree and a
node's conversation (the projection at that node) visible, screenshots compared with committed
references (tolerant: at most 0.4% of pixels may differ by more than a little, for font
antialiasing noise; fixed 1280x800 window, fixed session content).

Under CI=true the tests fail rather than skip when Chromium is missing (.ci/run installs it).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pitui.export import export_session
from pitui.session import SessionStore

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from support.chromium import Chromium, find_chromium  # noqa: E402
from support.sample_session import write_sample_session  # noqa: E402
from support.screenshots import assert_matches_reference  # noqa: E402

REFERENCES = Path(__file__).resolve().parent / "reference"
pytestmark = pytest.mark.timeout(180)


def chromium_or_skip() -> str:
    browser = find_chromium()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "Chromium is required under CI=true (.ci/run installs the chromium package)"
            )
        pytest.skip("chromium not installed")
    return browser


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Chromium, Path]]:
    """The sample session's page, open in Chromium (``target.with_suffix('.jsonl')`` is the
    session file)."""
    browser = chromium_or_skip()
    folder = tmp_path_factory.mktemp("export")
    session = write_sample_session(folder / "sample.jsonl")
    target = folder / "sample.html"
    with SessionStore.open(session, read_only=True) as store:
        export_session(store, target, "html")
    with Chromium(browser, folder / "profile", 1280, 800) as chrome:
        chrome.open(target.as_uri())
        yield chrome, target


def js(chrome: Chromium, expression: str) -> object:
    return chrome.evaluate(f"(() => {{ {expression} }})()")


def click_row(chrome: Chromium, entry_id: str) -> None:
    js(
        chrome,
        f"""const i = [...document.querySelectorAll('#tree .row')].find(r =>
        r.title.startsWith({json.dumps(entry_id)} + ' '));
        i.click(); return 1;""",
    )


def test_no_script_error_and_no_network_request(page: tuple[Chromium, Path]) -> None:
    chrome, target = page
    chrome.pump(0.3)
    assert chrome.script_errors() == []
    requests = chrome.requests()
    assert requests[0] == target.as_uri()
    assert all(url.startswith("data:image/png;base64,") for url in requests[1:])


def test_tree_and_the_leafs_conversation(page: tuple[Chromium, Path], tmp_path: Path) -> None:
    chrome, _ = page
    click_row(chrome, "e0000029")
    rows = js(chrome, "return [...document.querySelectorAll('#tree .row')].map(r => r.textContent)")
    assert isinstance(rows, list) and len(rows) == 22  # the default filter
    assert rows[0] == "• [system]" and rows[-1].endswith(
        "assistant: I would have to guess without running them."
    )
    assert any("[fixed]" in r for r in rows) and any(r.endswith("← leaf") for r in rows)
    shown = js(
        chrome,
        "return [...document.querySelectorAll('#messages > article')].map(a => a.dataset.entry)",
    )
    # The projection at the leaf: compaction summary, kept range, then the rest (the failed
    # reply hidden by its context_edit; tool results shown inside their calls).
    assert shown == [
        "e0000023",
        "e0000019",
        "e0000020",
        "e0000021",
        "e0000024",
        "e0000027",
        "e0000029",
    ]
    assert "compacted from 4,321 tokens" in str(
        js(chrome, "return document.querySelector('.compactionSummary').textContent")
    )
    assert js(chrome, "return document.querySelectorAll('.term span').length") > 0
    assert_matches_reference(
        chrome.screenshot(), REFERENCES / "export-leaf.png", tmp_path / "leaf.png"
    )


def test_a_nodes_conversation_as_the_model_saw_it(
    page: tuple[Chromium, Path], tmp_path: Path
) -> None:
    chrome, _ = page
    click_row(chrome, "e0000013")
    shown = js(
        chrome,
        "return [...document.querySelectorAll('#messages > article')].map(a => a.dataset.entry)",
    )
    assert shown == ["e0000006", "e0000007", "e0000009", "e0000011", "e0000013"]
    assert (
        js(chrome, "return document.querySelector('.diff .del').textContent")
        == "-    return text.split()"
    )
    colours = js(
        chrome,
        "return [...document.querySelectorAll('.term span')].map(s => s.style.color).filter(Boolean)",  # noqa: E501
    )
    assert "rgb(205, 0, 0)" in colours and "rgb(0, 205, 0)" in colours  # SGR red and green
    assert js(chrome, "return document.querySelector('details.think').open") is False
    assert js(chrome, "return document.querySelector('.md table th').textContent") == "word"
    assert (
        js(chrome, "return document.querySelector('.md a').href")
        == "https://docs.python.org/3/library/re.html"
    )
    assert "System prompt #1" in str(
        js(chrome, "return document.querySelector('#main > details.panel').textContent")
    )
    assert_matches_reference(
        chrome.screenshot(), REFERENCES / "export-node.png", tmp_path / "node.png"
    )


def test_first_kept_link_search_and_filters(page: tuple[Chromium, Path]) -> None:
    chrome, _ = page
    click_row(chrome, "e0000029")
    js(
        chrome,
        "document.querySelector('.compactionSummary .summary-facts .idlink').click(); return 1",
    )
    assert (
        js(chrome, "return document.querySelector('#tree .row.sel').title.split(' ')[0]")
        == "e0000019"
    )
    assert js(chrome, "return document.querySelector('#head .idlink').textContent") == "e0000019"
    js(
        chrome,
        "const s = document.getElementById('search'); s.value = 'json flag'; s.dispatchEvent(new Event('input')); return 1",  # noqa: E501
    )
    assert js(
        chrome,
        "return [...document.querySelectorAll('#tree .row')].map(r => r.title.split(' ')[0])",
    ) == ["e0000018", "e0000017"]
    js(
        chrome,
        "const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); return 1",  # noqa: E501
    )
    js(
        chrome,
        "const f = document.getElementById('filter'); f.value = 'user-only'; f.dispatchEvent(new Event('change')); return 1",  # noqa: E501
    )
    assert js(chrome, "return document.querySelectorAll('#tree .row').length") == 6
    js(
        chrome,
        "const f = document.getElementById('filter'); f.value = 'default'; f.dispatchEvent(new Event('change')); return 1",  # noqa: E501
    )
    js(chrome, "document.getElementById('stats-button').click(); return 1")
    stats = str(js(chrome, "return document.getElementById('stats').textContent"))
    assert "Branches" in stats and "e0000029 •" in stats and "$0.0957" in stats
    assert chrome.script_errors() == []


def visible(chrome: Chromium, selector: str) -> list[bool]:
    return js(  # type: ignore[return-value]
        chrome,
        f"return [...document.querySelectorAll({json.dumps(selector)})]"
        ".map(e => e.getClientRects().length > 0)",
    )


def set_box(chrome: Chromium, box: str, checked: bool) -> None:
    js(
        chrome,
        f"const b = document.getElementById({json.dumps(box)}); b.checked = {json.dumps(checked)};"
        " b.dispatchEvent(new Event('change')); return 1",
    )


def test_thinking_and_tool_output_can_be_hidden(page: tuple[Chromium, Path]) -> None:
    chrome, _ = page
    click_row(chrome, "e0000013")  # a node whose conversation has thinking and tool results
    assert visible(chrome, "details.think") and all(visible(chrome, "details.think"))
    assert visible(chrome, ".call .output") and all(visible(chrome, ".call .output"))
    set_box(chrome, "show-thinking", False)
    assert not any(visible(chrome, "details.think"))
    assert all(visible(chrome, ".call .output"))
    set_box(chrome, "show-output", False)
    assert not any(visible(chrome, ".call .output"))
    assert all(visible(chrome, ".call > summary"))  # which tools ran stays in view
    # The choice holds for every node shown afterwards, until it is undone.
    click_row(chrome, "e0000029")
    assert not any(visible(chrome, ".output")) and visible(chrome, ".output")
    set_box(chrome, "show-thinking", True)
    set_box(chrome, "show-output", True)
    click_row(chrome, "e0000013")
    assert all(visible(chrome, "details.think")) and all(visible(chrome, ".call .output"))
    assert chrome.script_errors() == []


def test_the_page_follows_the_dark_colour_scheme(
    page: tuple[Chromium, Path], tmp_path: Path
) -> None:
    chrome, _ = page
    colours = "return [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"  # noqa: E501
    try:
        chrome.emulate_dark(True)
        assert js(chrome, colours) == ["rgb(13, 17, 23)", "rgb(230, 237, 243)"]
        panel = (
            "return getComputedStyle(document.querySelector('.compactionSummary')).backgroundColor"
        )
        click_row(chrome, "e0000029")
        assert js(chrome, panel) == "rgb(42, 35, 16)"
        (tmp_path / "dark.png").write_bytes(chrome.screenshot())
    finally:
        chrome.emulate_dark(False)
    assert js(chrome, colours) == ["rgb(255, 255, 255)", "rgb(31, 35, 40)"]


def test_the_jsonl_download_is_the_sessions_own_bytes(
    page: tuple[Chromium, Path], tmp_path: Path
) -> None:
    chrome, target = page
    saved = chrome.download("document.getElementById('download').click()", tmp_path / "downloads")
    session = target.with_suffix(".jsonl")
    assert saved.name == session.name
    assert saved.read_bytes() == session.read_bytes()
    assert chrome.script_errors() == []
