"""Markdown rendered block by block gives the lines of the whole text rendered at once."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

from pitui.ui.markdown_lines import MarkdownRenderer, MarkdownStyle, block_starts, warm_up

ROOT = Path(__file__).resolve().parents[2]
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


def rich_lines(markdown: str, width: int) -> list[list[tuple[str, object]]]:
    """The lines Rich's own Markdown renders (its code blocks always wrapped)."""
    import io

    from rich.console import Console
    from rich.markdown import Markdown
    from rich.theme import Theme

    style = MarkdownStyle.from_theme({})
    console = Console(
        file=io.StringIO(),
        color_system="truecolor",
        force_terminal=True,
        theme=Theme(dict(style.styles), inherit=True),
    )
    options = console.options.update(width=width, height=None)
    lines = console.render_lines(
        Markdown(markdown, code_theme=style.code_theme, hyperlinks=False), options, pad=False
    )
    return [[(s.text, s.style) for s in line] for line in lines]


def test_code_blocks_look_as_rich_renders_them_at_every_line_length() -> None:
    """Code is not wrapped by Rich when every line fits (much faster while a code block
    streams); lines at, around and over the width, tabs and wide characters show exactly as
    Rich's wrapped rendering shows them."""
    renderer = MarkdownRenderer(MarkdownStyle.from_theme({}))
    for width in (12, 30, 80):
        for length in range(width - 4, width + 2):
            for unit in ("a", "\t", "字", "x\ty"):
                line = (unit * length)[:length]
                fence = f"```python\ndef f():\n{line}\n    return 1\n```"
                ours = [
                    [(s.text, s.style) for s in strip] for strip in renderer.render(fence, width)
                ]
                assert ours == rich_lines(fence, width)[: len(ours)], (width, length, unit)
                assert len(ours) >= 5  # padding, three lines (or more, wrapped), padding
    indented = "    x = 1\n    y = 'a long line that needs to wrap around'\n"
    unknown = "```nosuchlanguage\nx = 1\n```"
    plain = "```\nx = 1\n```"
    for block in (indented, unknown, plain):
        ours = [[(s.text, s.style) for s in strip] for strip in renderer.render(block, 24)]
        assert ours == rich_lines(block, 24)[: len(ours)]
    assert len(renderer.render(indented, 24)) > 4  # the long line wrapped


def test_blocks_are_found_where_the_renderers_parse_puts_them() -> None:
    """Blocks are split without the inline pass: the offsets must be those of a full parse
    (the one Rich renders with), or a block would be rendered cut in two."""
    from markdown_it import MarkdownIt

    full = MarkdownIt().enable("strikethrough").enable("table")  # as Rich's Markdown

    def with_full_parse(text: str) -> list[int]:
        offsets = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        starts: list[int] = []
        for token in full.parse(text):
            if token.level == 0 and token.nesting >= 0 and token.map is not None:
                line = token.map[0]
                at = offsets[line] if line < len(offsets) else len(text)
                if not starts or at > starts[-1]:
                    starts.append(at)
        return starts

    samples = [
        TEXT,
        "[ref]: http://example.com\n\nA [ref] link *over\ntwo* lines.\n\n[ref]",
        "* a\n* b\n\n  still b\n\n> q\n> `code\n> span`\n\nafter",
        "<div>\n*not emphasis*\n</div>\n\n**bold `x`** and ~~gone~~\n\n    indented code\n",
        "Setext\n======\n\n- [ ] task\n  ```\n  nested fence\n  ```\n\n```\nopen fence",
        "|a|b|\n|-|-|\n|`|`|2|\nno blank line after the table\n\n***\n\n1) x\n2) y",
        "A paragraph line\n| a | b |\n|---|---|\n| 1 | 2 |\nthen more",  # a table cuts in
    ]
    for text in samples:
        assert block_starts(text) == with_full_parse(text), text
    assert len(block_starts(samples[1])) == 2  # a reference definition is no block of its own


def markdown_renderers(root: Path) -> list[str]:
    """Modules under ``root`` that import a Markdown renderer (Rich's or Textual's widget)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                names = {alias.name for alias in node.names}
                if module.startswith("rich.markdown") or module.startswith("textual.widgets._m"):
                    found.append(f"{path.relative_to(root)} {module}")
                elif module == "textual.widgets" and names & {"Markdown", "MarkdownViewer"}:
                    found.append(f"{path.relative_to(root)} {module}.Markdown")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.relative_to(root)} {alias.name}"
                    for alias in node.names
                    if alias.name.startswith(("rich.markdown", "textual.widgets._markdown"))
                ]
    return found


def test_replies_and_summaries_have_one_markdown_renderer(tmp_path: Path) -> None:
    """Only this module renders Markdown (the chat's replies and summaries, the details
    pane's summary all show it through MarkdownView): no second renderer creeps back."""
    assert markdown_renderers(ROOT / "pitui") == ["ui/markdown_lines.py rich.markdown"]
    (tmp_path / "widget.py").write_text("from textual.widgets import Button, Markdown\n")
    assert markdown_renderers(tmp_path) == ["widget.py textual.widgets.Markdown"]
