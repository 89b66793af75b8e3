"""Real token counts with tiktoken: ``o200k_base`` for OpenAI-family models, else ``cl100k_base``.

tiktoken downloads its encodings on first use, which fails offline. litellm ships both files
(named the way tiktoken's cache names them), so before the first load we point
``TIKTOKEN_CACHE_DIR`` at litellm's copy, found with ``importlib.util.find_spec`` (importing
litellm costs seconds; this module never does). A cache directory the user set is kept when the
encoding is already there.

Counting follows :func:`pitui.session.shapes.counted_parts` (pi's chars/4 rules) with real
tokens instead of characters, and a flat :data:`IMAGE_TOKENS` per image. Counts of projected
messages are cached per ``(source entry id, context edit id)``: entries never change once
written, so the key names the message without hashing its content. Encoding a 200k-entry
session's leaf projection takes tens of milliseconds: call this off the UI thread.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pitui.lru import LruCache
from pitui.session.shapes import counted_parts

if TYPE_CHECKING:
    from tiktoken import Encoding

    from pitui.session.projection import Projection

IMAGE_TOKENS = 1200
DEFAULT_CACHE_SIZE = 200_000

O200K = "o200k_base"
CL100K = "cl100k_base"
ENCODING_URLS = {
    CL100K: "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    O200K: "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
OPENAI_PROVIDERS = frozenset({"openai", "azure"})
OPENAI_MODEL_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt")

EntryKey = tuple[str, str | None]

_LOAD_LOCK = threading.Lock()
_ENCODINGS: dict[str, Encoding] = {}
_SHARED: dict[str, TiktokenEstimator] = {}


# ----------------------------------------------------------------------------- loading


def cache_file_name(encoding_name: str) -> str:
    """The file name tiktoken's cache gives an encoding (sha1 of its download URL)."""
    return hashlib.sha1(ENCODING_URLS[encoding_name].encode()).hexdigest()


def bundled_cache_dir() -> Path | None:
    """litellm's ``litellm_core_utils/tokenizers`` folder, located without importing litellm."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [str(Path(spec.origin).parent)]
    for root in roots:
        folder = Path(root) / "litellm_core_utils" / "tokenizers"
        if folder.is_dir():
            return folder
    return None


def tiktoken_cache_dir(environ: Mapping[str, str]) -> str:
    """The cache directory tiktoken itself would use (``""`` means caching is off)."""
    if "TIKTOKEN_CACHE_DIR" in environ:
        return environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in environ:
        return environ["DATA_GYM_CACHE_DIR"]
    import tempfile

    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def ensure_tiktoken_cache(
    encoding_name: str, environ: MutableMapping[str, str] | None = None
) -> str | None:
    """Make tiktoken find ``encoding_name`` offline; return the cache directory it will read.

    Keeps the directory tiktoken would use when the encoding is already there; otherwise sets
    ``TIKTOKEN_CACHE_DIR`` to litellm's bundled copy. ``None``: no local copy anywhere (tiktoken
    will try to download it).
    """
    env = os.environ if environ is None else environ
    file_name = cache_file_name(encoding_name)
    current = tiktoken_cache_dir(env)
    if current and os.path.isfile(os.path.join(current, file_name)):
        return current
    bundled = bundled_cache_dir()
    if bundled is not None and (bundled / file_name).is_file():
        env["TIKTOKEN_CACHE_DIR"] = str(bundled)
        return str(bundled)
    return None


def load_encoding(encoding_name: str) -> Encoding:
    """The tiktoken encoding, loaded once per process (thread-safe; ~0.1–0.2 s the first time)."""
    encoding = _ENCODINGS.get(encoding_name)
    if encoding is not None:
        return encoding
    if encoding_name not in ENCODING_URLS:
        raise ValueError(f"Unsupported encoding {encoding_name!r}: use {O200K} or {CL100K}.")
    with _LOAD_LOCK:
        encoding = _ENCODINGS.get(encoding_name)
        if encoding is None:
            cache_dir = ensure_tiktoken_cache(encoding_name)
            import tiktoken

            try:
                encoding = tiktoken.get_encoding(encoding_name)
            except Exception as exc:
                where = cache_dir or "no local copy (set TIKTOKEN_CACHE_DIR)"
                raise RuntimeError(
                    f"Could not load tiktoken encoding {encoding_name!r}: {where}: {exc}"
                ) from exc
            _ENCODINGS[encoding_name] = encoding
    return encoding


def encoding_for_model(model: str | None) -> str:
    """``o200k_base`` for OpenAI-family models (``openai/…``, ``azure/…``, or a gpt-4o, gpt-4.1,
    gpt-5, o1, o3, o4 or chatgpt model name), else ``cl100k_base``."""
    if not model:
        return CL100K
    lowered = model.strip().lower()
    provider, _, _rest = lowered.partition("/")
    if _rest and provider in OPENAI_PROVIDERS:
        return O200K
    name = lowered.rsplit("/", 1)[-1]
    return O200K if name.startswith(OPENAI_MODEL_PREFIXES) else CL100K


# ----------------------------------------------------------------------------- what is counted


def _keys(projection: Projection) -> list[EntryKey | None]:
    """One cache key per projected message: ``(entry id, edit id)``; the second and later
    messages of one entry (a head compaction's checkpoint and summary) get ``id#n``."""
    ids = projection.source_entry_ids
    edits = projection.edits
    keys: list[EntryKey | None] = []
    previous: str | None = None
    repeat = 0
    for index in range(len(projection.messages)):
        if index >= len(ids):
            keys.append(None)
            continue
        entry_id = ids[index]
        repeat = repeat + 1 if entry_id == previous else 0
        previous = entry_id
        name = entry_id if repeat == 0 else f"{entry_id}#{repeat}"
        keys.append((name, edits.get(entry_id)))
    return keys


# ----------------------------------------------------------------------------- the estimator


class TiktokenEstimator:
    """Real tokens of projected messages (the ``tiktoken`` :class:`Estimator`).

    The encoding loads on first use (module-wide, once). ``count`` encodes every time;
    ``count_entry`` and ``count_projection`` cache per entry key in a bounded LRU.
    """

    name = "tiktoken"

    def __init__(self, encoding_name: str = CL100K, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        if encoding_name not in ENCODING_URLS:
            raise ValueError(f"Unsupported encoding {encoding_name!r}: use {O200K} or {CL100K}.")
        self.encoding_name = encoding_name
        self.cache_size = max(1, cache_size)
        self._encoding: Encoding | None = None
        self._cache: LruCache[EntryKey, int] = LruCache(self.cache_size)
        self._lock = threading.Lock()

    @classmethod
    def for_model(cls, model: str | None) -> TiktokenEstimator:
        """The shared estimator (and cache) for ``model``'s encoding."""
        encoding_name = encoding_for_model(model)
        estimator = _SHARED.get(encoding_name)
        if estimator is None:
            with _LOAD_LOCK:
                estimator = _SHARED.setdefault(encoding_name, cls(encoding_name))
        return estimator

    def __repr__(self) -> str:
        return f"TiktokenEstimator({self.encoding_name!r})"

    @property
    def encoding(self) -> Encoding:
        if self._encoding is None:
            self._encoding = load_encoding(self.encoding_name)
        return self._encoding

    def preload(self) -> threading.Thread:
        """Load the encoding on a daemon thread (0.1–0.4 s once per process), so the first
        count does not pay for it; join the returned thread to wait."""
        thread = threading.Thread(
            target=lambda: self.encoding, name=f"tiktoken-{self.encoding_name}", daemon=True
        )
        thread.start()
        return thread

    def tokens(self, text: str) -> int:
        """Tokens of plain text; special-token text such as ``<|endoftext|>`` counts as text."""
        return len(self.encoding.encode_ordinary(text)) if text else 0

    def count(self, message: dict[str, Any]) -> int:
        """Tokens of one projected message (a system message counts its sections and tools)."""
        texts, images = counted_parts(message)
        return images * IMAGE_TOKENS + sum(self.tokens(text) for text in texts)

    # ------------------------------------------------------------------------- cached

    def count_entry(self, key: EntryKey, message: dict[str, Any]) -> int:
        """``count(message)``, cached under ``key`` = ``(source entry id, context edit id)``."""
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        value = self.count(message)
        self._store([(key, value)])
        return value

    def count_projection(self, projection: Projection) -> tuple[int, list[int]]:
        """``(total, per_message)`` for what the model is sent at ``projection``'s leaf.

        ``per_message`` is aligned with ``projection.messages`` (each system message counted
        on its own). ``total`` counts the folded system prompt and its tools once, plus every
        other message, like ``projected_context_tokens``.
        """
        messages = projection.messages
        keys = _keys(projection)
        per: list[int | None] = [None] * len(messages)
        with self._lock:
            cache = self._cache
            for index, key in enumerate(keys):
                if key is not None:
                    cached = cache.get(key)
                    if cached is not None:
                        per[index] = cached
        fresh: list[tuple[EntryKey, int]] = []
        for index, value in enumerate(per):
            if value is None:
                value = self.count(messages[index])
                per[index] = value
                key = keys[index]
                if key is not None:
                    fresh.append((key, value))
        counts = [value or 0 for value in per]
        total = sum(c for c, m in zip(counts, messages, strict=True) if m.get("role") != "system")
        system_keys = [k for k, m in zip(keys, messages, strict=True) if m.get("role") == "system"]
        if system_keys:
            total += self._system_tokens(projection, system_keys, fresh)
        if fresh:
            self._store(fresh)
        return total, counts

    def _system_tokens(
        self,
        projection: Projection,
        system_keys: list[EntryKey | None],
        fresh: list[tuple[EntryKey, int]],
    ) -> int:
        """Tokens of the folded system message, cached by the keys of the messages folded."""
        system = projection.system_message
        if not system:
            return 0
        if any(k is None for k in system_keys):
            return self.count(system)
        fold: EntryKey = (
            "\x00system:" + "|".join(f"{k[0]}/{k[1] or ''}" for k in system_keys if k),
            None,
        )
        with self._lock:
            cached = self._cache.get(fold)
            if cached is not None:
                return cached
        value = self.count(system)
        fresh.append((fold, value))
        return value

    def _store(self, items: Iterable[tuple[EntryKey, int]]) -> None:
        with self._lock:
            cache = self._cache
            for key, value in items:
                cache.put(key, value)

    def cached(self, key: EntryKey) -> int | None:
        """The cached count under ``key``, if any (does not touch the LRU order)."""
        with self._lock:
            return self._cache.peek(key)

    def cache_len(self) -> int:
        with self._lock:
            return len(self._cache)

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()
