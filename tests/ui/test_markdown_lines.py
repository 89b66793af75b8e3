"""Markdown rendered block by block gives the lines of the whole text rendered at once."""

from __future__ import annotations

import itertools

from pitui.ui.markdown_lines import MarkdownRenderer, MarkdownStyle, block_starts, warm_up

TEXT = "\n\n".join(
    [
        "# Title",
        "Some **bold**, `code` and a [link](http://example.com).",
        "- one\n- two\n  continued",
        "1. first\n2. second",
        "```python\ndef f(x):\n    return x + 1\n```",
        "> quoted\n> text",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        "A last paragraph\nwith a soft break.",
    ]
)


def texts(lines: list) -> list[str]:  # type: ignore[type-arg]
    return [line.text.rstrip() for line in lines]


def collapse_blank_runs(lines: list[str]) -> list[str]:
    out: list[str] = []
    for blank, group in itertools.groupby(lines, key=lambda line: not line):
        out.extend([""] if blank else group)
    return out


def test_blocks_rendered_one_by_one_match_the_whole_text() -> None:
    renderer = MarkdownRenderer(MarkdownStyle.from_theme({}))
    starts = [*block_starts(TEXT), len(TEXT)]
    assert len(starts) == 9  # eight blocks
    by_block: list[str] = []
    for start, end in itertools.pairwise(starts):
        if by_block:
            by_block.append("")
        by_block += texts(renderer.render(TEXT[start:end], 60))
    whole = collapse_blank_runs(texts(renderer.render(TEXT, 60)))
    assert collapse_blank_runs(by_block) == whole  # (Rich puts 2 blank lines around tables)
    assert by_block[0] == "Title"  # headings start at the left margin
    assert "Some bold, code and a link (http://example.com)." in by_block
    assert " 1. first" in by_block
    # a thematic break is a solid line (Rich draws dashes)
    assert texts(renderer.render("---", 20)) == ["─" * 20]


def test_markup_and_emoji_codes_stay_literal() -> None:
    renderer = MarkdownRenderer(MarkdownStyle.from_theme({}))
    shown = texts(renderer.render("[bold red]not markup[/] :smile: [link=x]y[/link]", 60))
    assert shown == ["[bold red]not markup[/] :smile: [link=x]y[/link]"]


def test_the_warm_up_renders() -> None:
    warm_up()  # imports and builds what the first reply needs; must not raise
