"""The one-line text of a compaction names its size as pi does, except under a thousand
tokens (pi 1.6 writes "0k" for 180)."""

from __future__ import annotations

import pytest

from pitui.session.oneline import entry_text


@pytest.mark.parametrize(
    ("tokens", "shown"),
    [
        (180, "[compaction: 180 tokens]"),
        (0, "[compaction: 0 tokens]"),
        (999, "[compaction: 999 tokens]"),
        (1000, "[compaction: 1k tokens]"),
        (12_499, "[compaction: 12k tokens]"),
        (12_500, "[compaction: 13k tokens]"),
        (1500.0, "[compaction: 2k tokens]"),
        ("many", "[compaction: ? tokens]"),
        (None, "[compaction: ? tokens]"),
        (True, "[compaction: ? tokens]"),
        (float("nan"), "[compaction: ? tokens]"),
        (float("inf"), "[compaction: ? tokens]"),
    ],
)
def test_compaction_size(tokens: object, shown: str) -> None:
    entry = {"type": "compaction", "id": "c1", "summary": "s", "tokensBefore": tokens}
    assert entry_text(entry) == shown
