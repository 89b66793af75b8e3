"""Comparing a screenshot with a committed reference image, tolerant of antialiasing noise."""

from __future__ import annotations

import io
import os
from pathlib import Path

UPDATE_ENV = "PITUI_UPDATE_SCREENSHOTS"
CHANNEL_TOLERANCE = 48  # a pixel differs when one channel moves by more than this
MAX_DIFFERING = 0.004  # at most 0.4% of the pixels may differ


def differing_fraction(actual: bytes, reference: bytes) -> float:
    from PIL import Image, ImageChops

    a = Image.open(io.BytesIO(actual)).convert("RGB")
    b = Image.open(io.BytesIO(reference)).convert("RGB")
    if a.size != b.size:
        return 1.0
    diff = (
        ImageChops.difference(a, b)
        .convert("L")
        .point(lambda v: 255 if v > CHANNEL_TOLERANCE else 0)
    )
    histogram = diff.histogram()
    return histogram[255] / (a.size[0] * a.size[1])


def assert_matches_reference(actual: bytes, reference: Path, keep: Path) -> None:
    """``actual`` (PNG) looks like ``reference``; on a mismatch the actual image is kept at
    ``keep`` to look at. ``PITUI_UPDATE_SCREENSHOTS=1`` rewrites the reference."""
    if os.environ.get(UPDATE_ENV) == "1" or not reference.exists():
        reference.parent.mkdir(parents=True, exist_ok=True)
        reference.write_bytes(actual)
        if os.environ.get(UPDATE_ENV) != "1":
            raise AssertionError(f"{reference} did not exist; written now: look at it, commit it")
        return
    fraction = differing_fraction(actual, reference.read_bytes())
    if fraction > MAX_DIFFERING:
        keep.write_bytes(actual)
        raise AssertionError(
            f"screenshot differs from {reference.name} in {fraction:.2%} of its pixels "
            f"(at most {MAX_DIFFERING:.1%}); the actual image is {keep}"
        )
