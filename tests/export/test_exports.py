"""The exports' content: HTML page structure and data, Markdown, JSONL, file modes, the CLI."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from pitui.cli import main
from pitui.export import export_session, render
from pitui.export.markdown import fence, neutralize_html
from pitui.export.view import js_safe_json
from pitui.session import SessionStore

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from support.sample_session import write_sample_session  # noqa: E402

HOSTILE = "<script>alert(1)</script>\x1b[31mred\x1b]0;title\x07\x9b2J</pre>&amp;\u2028"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write_sample_session(tmp_path / "sessions" / "sample.jsonl")


def page_parts(page: str) -> tuple[str, dict[str, Any], str]:
    """(CSP, decoded data, script) of an exported page."""
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    data = re.search(r'<script type="application/octet-stream" id="pitui-data">([^<]*)</script>',
                     page)  # fmt: skip
    script = re.search(r"<script>(.*)</script>", page, re.S)
    assert csp and data and script
    decoded = json.loads(zlib.decompress(base64.b64decode(data.group(1))))
    return csp.group(1), decoded, script.group(1)


def sha(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_html_page_is_self_contained_with_a_strict_csp(sample: Path) -> None:
    with SessionStore.open(sample, read_only=True) as store:
        page = render(store, "html").decode()
    csp, data, script = page_parts(page)
    style = re.search(r"<style>(.*)</style>", page, re.S)
    assert style is not None
    assert f"script-src 'sha256-{sha(script)}'" in csp
    assert f"style-src 'sha256-{sha(style.group(1))}'" in csp
    for rule in ("default-src 'none'", "require-trusted-types-for 'script'", "base-uri 'none'"):
        assert rule in csp
    assert "unsafe" not in csp
    # No markup from strings, no eval, no inline handlers, nothing fetched.
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                   "new Function", "fetch(", "XMLHttpRequest", "import("):  # fmt: skip
        assert banned not in script
    assert not re.search(r"<[^>]+\son\w+\s*=", page)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert data["meta"]["title"] == "Fix word counting"
    assert len(data["nodes"]) == 29 and data["nodes"][data["meta"]["leaf"]][0] == "e0000029"


def test_html_data_holds_each_nodes_projection(sample: Path) -> None:
    with SessionStore.open(sample, read_only=True) as store:
        _, data, _ = page_parts(render(store, "html").decode())
        ids = [n[0] for n in data["nodes"]]
        for i, entry_id in enumerate(ids):
            parts, cur = [], i
            while cur >= 0:
                parts.append(data["added"][cur])
                cur = data["base"][cur]
            variants = [v for part in reversed(parts) for v in part]
            sources = [ids[data["messages"][v]["s"]] for v in variants]
            assert sources == store.project(entry_id).source_entry_ids
    leaf = data["meta"]["leaf"]
    assert ids[leaf] == "e0000029"
    kinds = {b[0] for m in data["messages"] for b in m["b"]}
    assert {"md", "think", "call", "result", "compaction", "branch", "img"} <= kinds
    edit_call = next(b for m in data["messages"] for b in m["b"] if b[0] == "call"
                     and b[2] == "edit")  # fmt: skip
    assert ["-", "    return text.split()"] in edit_call[5]
    ansi = next(b for m in data["messages"] for b in m["b"] if b[0] == "result"
                and b[4] and b[4][0][0] == "ansi")  # fmt: skip
    styles = {data["styles"][s]["fg"] for _, s in ansi[4][0][1] if s >= 0 and
              "fg" in data["styles"][s]}  # fmt: skip
    assert {"#cd0000", "#00cd00"} <= styles  # red F, green passed
    assert data["stats"]["branchCount"] == 3
    assert set(data["rows"]) == {"default", "no-tools", "user-only", "labeled-only", "all"}
    assert data["rows"]["user-only"] == [i for i in data["rows"]["all"]
                                         if data["nodes"][i][2] == "user"]  # fmt: skip


def test_branch_only_and_leaf(sample: Path) -> None:
    with SessionStore.open(sample, read_only=True) as store:
        _, data, _ = page_parts(
            render(store, "html", leaf_id="e0000017", branch_only=True).decode()
        )
        assert store.leaf_id == "e0000029"  # moved only for the export
    ids = [n[0] for n in data["nodes"]]
    assert ids[-1] == "e0000017" and "e0000029" not in ids and "e0000004" not in ids
    assert ids[data["meta"]["leaf"]] == "e0000017" and data["meta"]["branchOnly"]
    assert len(data["stats"]["branches"]) == 1


def test_js_safe_json_cannot_end_the_block() -> None:
    text = js_safe_json({"a": HOSTILE + "\ud800", "n": float("nan")})
    assert not set(text) & set("<>&\u2028\x9b\x1b")
    assert json.loads(text)["a"].startswith("<script>")
    assert json.loads(text)["n"] is None


def test_markdown_export(sample: Path) -> None:
    with SessionStore.open(sample, read_only=True) as store:
        text = render(store, "md").decode()
    assert text.startswith("# Fix word counting\n")
    assert "### User · 2026-01-15 09:40:42 UTC · `e0000006`" in text
    assert "> **Thinking**" in text
    assert "**Tool call** [edit: wordfreq.py]" in text
    assert "### Compaction" in text and "first kept entry is `e0000019`" in text
    assert "\x1b" not in text and "Could it print JSON" not in text  # another branch
    assert "| word | expected | actual |" in text  # Markdown stays Markdown


def test_markdown_neutralizes_html_and_fences() -> None:
    assert neutralize_html("a <b>x</b> `<i>` <3") == "a &lt;b>x&lt;/b> `<i>` <3"
    assert neutralize_html("```\n<script>\n```") == "```\n<script>\n```"
    assert fence("a ```` b") == "`````\na ```` b\n`````"


def test_jsonl_export_is_the_branch_as_stored(sample: Path) -> None:
    with SessionStore.open(sample, read_only=True) as store:
        data = render(store, "jsonl", leaf_id="e0000017")
        lines = data.split(b"\n")
        assert lines[1:-1] == [store.raw_line(n) for n in store.path_to("e0000017")]
    out = sample.parent / "branch.jsonl"
    out.write_bytes(data)
    with SessionStore.open(out, read_only=True) as copy:
        assert copy.leaf_id == "e0000017"


@pytest.mark.parametrize("fmt", ["html", "md", "jsonl"])
def test_export_files_are_private(sample: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / "new" / "dir" / f"out.{fmt}"
    old = os.umask(0)
    try:
        with SessionStore.open(sample, read_only=True) as store:
            export_session(store, target, fmt)
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]


# ----------------------------------------------------------------------------- the CLI


def test_cli_export_formats_and_defaults(
    sample: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(sample)]) == 0
    assert (tmp_path / "sample.html").is_file()
    assert "Exported html" in capsys.readouterr().err
    assert main(["export", str(sample), "-o", str(tmp_path / "x.md")]) == 0
    assert (tmp_path / "x.md").read_text().startswith("# Fix word counting")
    assert main(["export", str(sample), "--format", "jsonl", "--leaf", "e000001", "-o", "o"]) == 2
    assert "ambiguous" in capsys.readouterr().err
    assert main(["export", str(sample), "--leaf", "e0000017", "-o", "-", "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "Add a --top option" not in out and "Could it print JSON" in out
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["export", str(sample), "-o", str(blocked / "x.html")]) == 2
    assert "Could not write" in capsys.readouterr().err


def hostile_session(tmp_path: Path) -> Path:
    store = SessionStore.create(tmp_path / "h", "/")
    store.append_session_info("name " + HOSTILE)
    user = store.append_message({"role": "user", "content": HOSTILE, "timestamp": 1})
    store.append_message({"role": "assistant", "content": [{"type": "text", "text": HOSTILE}],
                          "usage": {}, "stopReason": "stop", "timestamp": 2})  # fmt: skip
    store.append_label(user, HOSTILE)
    assert store.path is not None
    path = store.path
    store.close()
    return path


def test_cli_text_output_is_sanitized_and_json_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hostile_session(tmp_path)
    with SessionStore.open(path, read_only=True) as store:
        first = store.path_to()[1].id
    for argv in (["stats", str(path)], ["context", str(path), "--leaf", first, "--diff",
                 store.leaf_id or ""], ["export", str(path), "--format", "md", "-o", "-"]):  # fmt: skip  # noqa: E501
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028]", out), argv
        assert "<script>alert(1)</script>" not in out or argv[0] != "export"
    assert main(["stats", str(path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["sessionName"] == ("name " + HOSTILE).strip()  # exact, as stored (trimmed)
    assert (
        main(["context", str(path), "--leaf", first, "--diff", store.leaf_id or "", "--json"]) == 0
    )
    diff = json.loads(capsys.readouterr().out)
    assert diff["added"][0]["text"] == " ".join(HOSTILE.split())


@pytest.mark.slow
def test_headless_report_commands_import_no_textual_or_litellm(
    sample: Path, tmp_path: Path
) -> None:
    code = (
        "import sys\n"
        "from pitui.cli import main\n"
        f"for argv in (['stats', {str(sample)!r}], ['export', {str(sample)!r}, '-o', "
        f"{str(tmp_path / 'x.html')!r}], ['context', {str(sample)!r}, '--diff', 'e0000013']):\n"
        "    assert main(argv) == 0\n"
        "print(sorted(m for m in ('textual', 'litellm', 'rich') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
