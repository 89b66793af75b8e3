"""The README and the manual in docs/ stay true: every relative link and anchor resolves to a
file of the repository, no link leaves it except a public URL, the README keeps its two set-up
commands on top (the ones CI runs), and docs/settings.md names every settings key."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from pitui.config.settings import ModelSettings, Settings, TokenOverrides, full_values, leaves

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks/README.md"]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^( {0,3})(```+|~~~+)[^\n]*\n.*?^\1\2[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)


def prose(text: str) -> str:
    """The text without code blocks and code spans (their brackets are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def links(page: Path) -> list[str]:
    return LINK.findall(prose(page.read_text(encoding="utf-8")))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in ("L", "N"))
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def test_the_pages_exist_and_have_links() -> None:
    assert all(page.is_file() for page in PAGES)
    assert len(links(ROOT / "README.md")) >= 10
    assert "docs/architecture.md" in links(ROOT / "README.md") or any(
        "architecture.md" in link for link in links(ROOT / "docs" / "README.md")
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_inside_the_repository(page: Path) -> None:
    problems = []
    for target in links(page):
        if re.match(r"^(https?|mailto):", target):
            if re.match(r"^https?://(localhost|127\.|\[::1\]|0\.0\.0\.0)", target):
                problems.append(f"{target}: not a public URL")
            continue
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
            problems.append(f"{target}: neither a public URL nor a relative path")
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if ROOT not in (resolved, *resolved.parents):
            problems.append(f"{target}: outside the repository")
            continue
        if not resolved.exists():
            problems.append(f"{target}: no such file")
            continue
        if anchor:
            if resolved.suffix != ".md":
                problems.append(f"{target}: an anchor into a file that is not Markdown")
            elif anchor not in anchors(resolved):
                problems.append(f"{target}: no heading #{anchor} in {resolved.name}")
    assert problems == [], f"{page.relative_to(ROOT)}: " + "; ".join(problems)


def test_slugs_follow_githubs_rule() -> None:
    assert slug("`pitui config`: what is in effect, and from where") == (
        "pitui-config-what-is-in-effect-and-from-where"
    )
    assert slug("Anthropic (Claude)") == "anthropic-claude"
    assert slug("Where pitui deliberately differs from pi 1.6") == (
        "where-pitui-deliberately-differs-from-pi-16"
    )


def test_the_readme_starts_with_the_two_set_up_commands_that_ci_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)\n```$", text, re.M | re.S)
    assert blocks[:2] == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && pitui --demo",
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && pytest",
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # The same steps, in order: the virtualenv, the test extra, then a bare `pytest`.
    steps = [
        "python3 -m venv .venv",
        ". .venv/bin/activate",
        "-e '.[test]'",
        "check tests pytest\n",
    ]
    positions = [ci.index(step) for step in steps]
    assert positions == sorted(positions)
    assert len(text.splitlines()) <= 200  # a front door, not the manual


def test_the_settings_page_names_every_key() -> None:
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    keys = set(leaves(full_values(Settings())))
    for struct in (ModelSettings, TokenOverrides):
        keys |= {name for name in full_values(struct())}
    missing = sorted(k for k in keys if f"`{k}`" not in page and k not in page)
    assert missing == []
