"""Entry ids, session ids and timestamps exactly as pi writes them."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
from collections.abc import Container
from datetime import UTC, datetime

_ISO_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$"
)


def new_entry_id(existing: Container[str]) -> str:
    """8 lowercase hex chars, unique among ``existing`` (pi falls back to a full UUID)."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in existing:
            return candidate
    return new_session_id()


def deterministic_entry_id(seed: str, line_no: int, existing: Container[str]) -> str:
    """A stable 8-hex id for a migrated v1 entry, derived from the header id and its line."""
    counter = 0
    while True:
        digest = hashlib.sha1(f"{seed}:{line_no}:{counter}".encode()).hexdigest()[:8]
        if digest not in existing:
            return digest
        counter += 1


def new_session_id() -> str:
    """A UUIDv7 string, as pi 1.6 gives new sessions."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_SESSION_ID_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def is_valid_session_id(value: str) -> bool:
    return bool(_SESSION_ID_RE.match(value))


def now_iso() -> str:
    """Entry timestamp: ISO-8601 UTC with exactly 3 fractional digits and ``Z``."""
    return ms_to_iso(now_ms())


def now_ms() -> int:
    """Message timestamp: epoch milliseconds."""
    return time.time_ns() // 1_000_000


def ms_to_iso(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def iso_to_ms(value: object) -> float | None:
    """Parse an ISO timestamp like JS ``Date.parse``; None when it cannot be read."""
    if not isinstance(value, str):
        return None
    m = _ISO_RE.match(value)
    if m is None:
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp() * 1000
    year, month, day, hour, minute, second, frac, tz = m.groups()
    try:
        dt = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=UTC
        )
    except ValueError:
        return None
    ms = dt.timestamp() * 1000 + (int((frac or "0")[:3].ljust(3, "0")) if frac else 0)
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        ms -= sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60_000
    return ms


def file_timestamp(iso: str) -> str:
    """The timestamp part of a session file name: ``:`` and ``.`` replaced by ``-``."""
    return iso.replace(":", "-").replace(".", "-")
