"""Extensions: Python modules that hook into compaction and tree navigation.

An extension is a module with ``def register(api: ExtensionAPI) -> None``; ``register`` adds
plain callables (sync or async) with ``api.on_before_compact``, ``api.on_compact_failed`` and
``api.on_before_tree``. See ``docs/extensions.md``.

Runner semantics (pi's ``session_before_*``): handlers run in extension order, then
registration order; the LAST truthy result wins; a ``Cancel`` returns at once (later handlers
do not run); a handler that raises, or returns something that is not a hook result, is reported
(``Extensions.errors`` and the log) and ignored. Results are checked by type: an extension
returns the classes below (``from pitui.agent.extensions import Cancel``), and a class of its
own with the same name is refused.

Where extensions come from (:meth:`Extensions.load`): the ``extensions`` list of the user's
global settings file (always), then the ``extensions`` list of ``<project>/.pitui/settings.json``
and every ``<project>/.pitui/extensions/*.py`` (sorted by name), only if the project is trusted
(see :mod:`pitui.config.trust`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypeAlias, TypeVar

from pitui.compaction.prepare import CompactionPreparation
from pitui.config.paths import config_dir
from pitui.config.settings import Settings, read_settings_file
from pitui.text import one_line

log = logging.getLogger(__name__)

PROJECT_DIR = ".pitui"
PROJECT_EXTENSIONS_DIR = "extensions"


# --- Hook results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Cancel:
    """Cancel the operation (the compaction, or the tree navigation)."""


@dataclass(frozen=True)
class Summary:
    """Use this compaction summary instead of asking the model (stored with ``fromHook: true``).

    ``None`` fields fall back to the preparation's ``first_kept_entry_id`` / ``tokens_before``.
    """

    summary: str
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None
    details: dict[str, Any] | None = None

    def append_args(self, preparation: CompactionPreparation) -> dict[str, Any]:
        """Keyword arguments for ``SessionStore.append_compaction``."""
        return {
            "summary": self.summary,
            "first_kept_entry_id": (
                self.first_kept_entry_id
                if self.first_kept_entry_id is not None
                else preparation.first_kept_entry_id
            ),
            "tokens_before": (
                self.tokens_before if self.tokens_before is not None else preparation.tokens_before
            ),
            "details": self.details,
            "from_hook": True,
        }


@dataclass(frozen=True)
class BranchSummaryResult:
    """Use this branch summary (when the user asked for one) instead of asking the model."""

    summary: str
    details: dict[str, Any] | None = None


CompactionHookResult: TypeAlias = Cancel | Summary | None
TreeHookResult: TypeAlias = Cancel | BranchSummaryResult | None


@dataclass
class TreePreparation:
    """What ``/tree`` is about to do (pi's ``session_before_tree`` preparation)."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[str]
    user_wants_summary: bool
    custom_instructions: str | None = None


_T = TypeVar("_T")
_Maybe: TypeAlias = _T | Awaitable[_T]

BeforeCompactHook: TypeAlias = Callable[
    [CompactionPreparation, str, bool], _Maybe[CompactionHookResult]
]
CompactFailedHook: TypeAlias = Callable[[str, str], _Maybe[None]]
BeforeTreeHook: TypeAlias = Callable[[TreePreparation], _Maybe[TreeHookResult]]

HookName: TypeAlias = Literal["before_compact", "compact_failed", "before_tree"]

_F = TypeVar("_F", bound=Callable[..., Any])


# --- The API an extension sees --------------------------------------------------------------


class ExtensionAPI:
    """Given to an extension's ``register``; each ``on_*`` returns ``fn`` (usable as a
    decorator)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.before_compact: list[BeforeCompactHook] = []
        self.compact_failed: list[CompactFailedHook] = []
        self.before_tree: list[BeforeTreeHook] = []

    def on_before_compact(self, fn: _F) -> _F:
        """``fn(preparation, reason, will_retry)`` → ``None`` | ``Cancel()`` | ``Summary(...)``.

        ``reason`` is ``"manual"``, ``"threshold"`` or ``"overflow"``."""
        self.before_compact.append(fn)
        return fn

    def on_compact_failed(self, fn: _F) -> _F:
        """``fn(reason, error)`` → ``None``; told when a compaction failed."""
        self.compact_failed.append(fn)
        return fn

    def on_before_tree(self, fn: _F) -> _F:
        """``fn(preparation: TreePreparation)`` → ``None`` | ``Cancel()`` |
        ``BranchSummaryResult(...)``."""
        self.before_tree.append(fn)
        return fn

    def __repr__(self) -> str:
        return f"ExtensionAPI({self.name!r})"


# --- The registry ---------------------------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    text = one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _wrong_result(result: object, allowed: tuple[type, ...]) -> str:
    """Why a hook's result was refused. A class of its own that only shares a name with ours
    (``class Cancel: ...`` in the extension) is refused like any other type, but told apart:
    the fix is to import ours."""
    kind = type(result)
    namesake = next((t for t in allowed if t.__name__ == kind.__name__), None)
    if namesake is not None:
        return (
            f"returned its own {kind.__name__} class ({kind.__module__}.{kind.__qualname__}), "
            f"not pitui's: import {kind.__name__} from {namesake.__module__}"
        )
    expected = " or ".join(t.__name__ for t in allowed)
    return f"returned {kind.__name__} instead of None or {expected}"


def _is_path(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or "\\" in spec or spec.startswith(("~", "."))


def _extension_list(values: dict[str, Any], where: str, warnings: list[str]) -> list[str]:
    raw = values.get("extensions")
    if raw is None:
        return []
    if not isinstance(raw, list):
        warnings.append(f"Ignoring extensions in {where}: it must be a list of strings.")
        return []
    specs: list[str] = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            specs.append(item.strip())
        else:
            warnings.append(f"Ignoring extension entry {item!r} in {where}: it is not a name.")
    return specs


@dataclass
class _Source:
    spec: str  # a module name, or a .py path
    base: Path  # what a relative path is relative to
    where: str  # for messages


@dataclass
class Extensions:
    """The loaded extensions, in order, and the async runners for their hooks."""

    extensions: list[ExtensionAPI] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _loaded: set[str] = field(default_factory=set, repr=False)

    @property
    def names(self) -> list[str]:
        return [ext.name for ext in self.extensions]

    def add(self, name: str, register: Callable[[ExtensionAPI], object]) -> ExtensionAPI:
        """Register an extension from code (``register`` is called now; exceptions propagate)."""
        api = ExtensionAPI(name)
        register(api)
        self.extensions.append(api)
        return api

    # -- loading --

    def load(self, cwd: Path, settings: Settings, *, trusted: bool) -> list[str]:
        """Load the user's extensions, and the project's if ``trusted``; returns warnings (one
        sentence each) and never raises. Loading the same module or file twice is a no-op.

        ``settings`` is the merged settings; an ``extensions`` entry in it that neither settings
        file lists (the caller put it there) counts as the user's.
        """
        warnings: list[str] = []
        try:
            self._load(Path(cwd), settings, trusted, warnings)
        except Exception as exc:  # pragma: no cover - defensive: load never raises
            warnings.append(f"Extensions could not be loaded ({_one_line(exc)}).")
        for warning in warnings:
            log.warning("%s", warning)
        return warnings

    def _load(self, cwd: Path, settings: Settings, trusted: bool, warnings: list[str]) -> None:
        user_file = config_dir() / "settings.json"
        project_folder = cwd / PROJECT_DIR
        project_file = project_folder / "settings.json"
        ignored: list[str] = []  # load_settings already reported unreadable files
        user_specs = _extension_list(
            read_settings_file(user_file, ignored), str(user_file), warnings
        )
        project_specs = _extension_list(
            read_settings_file(project_file, ignored), str(project_file), warnings
        )
        given = [s.strip() for s in settings.extensions if s.strip()]
        if given:
            user_specs += [s for s in given if s not in user_specs and s not in project_specs]

        sources = [_Source(s, config_dir(), str(user_file)) for s in user_specs]
        project_sources = [_Source(s, cwd, str(project_file)) for s in project_specs]
        folder = project_folder / PROJECT_EXTENSIONS_DIR
        if folder.is_dir():
            project_sources += [
                _Source(str(p), folder, str(folder))
                for p in sorted(folder.glob("*.py"), key=lambda p: p.name)
                if p.is_file() and not p.name.startswith(".")
            ]
        if trusted:
            sources += project_sources
        elif project_sources:
            warnings.append(
                f"The project {cwd} has {len(project_sources)} extension(s) that were not "
                "loaded because it is not trusted (run `pitui trust` in it to load them)."
            )
        for source in sources:
            self._load_one(source, warnings)

    def _load_one(self, source: _Source, warnings: list[str]) -> None:
        spec = source.spec
        try:
            if _is_path(spec):
                path = Path(spec).expanduser()
                if not path.is_absolute():
                    path = source.base / path
                path = path.resolve()
                key, name = f"file:{path}", path.stem
                if key in self._loaded:
                    return
                module = _import_file(path)
            else:
                key, name = f"module:{spec}", spec
                if key in self._loaded:
                    return
                module = importlib.import_module(spec)
        except (Exception, SystemExit) as exc:
            warnings.append(
                f"Extension {spec!r} (from {source.where}) could not be loaded ({_one_line(exc)})."
            )
            return
        register = getattr(module, "register", None)
        if not callable(register):
            warnings.append(
                f"Extension {spec!r} (from {source.where}) has no register(api) function, "
                "so it was skipped."
            )
            return
        api = ExtensionAPI(name)
        try:
            register(api)
        except (Exception, SystemExit) as exc:
            warnings.append(
                f"Extension {spec!r} (from {source.where}) failed in register "
                f"({_one_line(exc)}), so it was skipped."
            )
            return
        self._loaded.add(key)
        self.extensions.append(api)

    # -- running --

    def _handlers(self, hook: HookName) -> Iterator[tuple[ExtensionAPI, Callable[..., Any]]]:
        for ext in list(self.extensions):
            for fn in list(getattr(ext, hook)):
                yield ext, fn

    def has_handlers(self, hook: HookName) -> bool:
        """Whether any extension registered ``hook`` (``"before_compact"``, ...)."""
        return any(True for _ in self._handlers(hook))

    def _report(self, ext: ExtensionAPI, hook: HookName, problem: str) -> None:
        message = f"Extension {ext.name!r} {hook} handler {problem}; it was ignored."
        self.errors.append(message)
        log.warning("%s", message)

    async def _call(
        self, ext: ExtensionAPI, hook: HookName, fn: Callable[..., Any], *args: Any
    ) -> tuple[bool, Any]:
        """(ok, result) of one handler; a raising handler is reported and gives (False, None)."""
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                result = await result
        except (Exception, SystemExit) as exc:
            self._report(ext, hook, f"failed ({_one_line(exc)})")
            return False, None
        return True, result

    async def _run_before(self, hook: HookName, allowed: tuple[type, ...], *args: Any) -> Any:
        winner: Any = None
        for ext, fn in self._handlers(hook):
            ok, result = await self._call(ext, hook, fn, *args)
            if not ok or not result:
                continue
            if not isinstance(result, allowed):
                self._report(ext, hook, _wrong_result(result, allowed))
                continue
            if isinstance(result, Cancel):
                return result
            winner = result
        return winner

    async def run_before_compact(
        self, preparation: CompactionPreparation, reason: str, will_retry: bool
    ) -> Cancel | Summary | None:
        result: Cancel | Summary | None = await self._run_before(
            "before_compact", (Cancel, Summary), preparation, reason, will_retry
        )
        return result

    async def run_compact_failed(self, reason: str, error: str) -> None:
        for ext, fn in self._handlers("compact_failed"):
            await self._call(ext, "compact_failed", fn, reason, error)

    async def run_before_tree(
        self, preparation: TreePreparation
    ) -> Cancel | BranchSummaryResult | None:
        result: Cancel | BranchSummaryResult | None = await self._run_before(
            "before_tree", (Cancel, BranchSummaryResult), preparation
        )
        return result


def _import_file(path: Path) -> ModuleType:
    """Import a ``.py`` file under a private, unique module name."""
    if not path.is_file():
        raise FileNotFoundError(f"no such file {path}")
    digest = hashlib.sha1(str(path).encode("utf-8"), usedforsecurity=False).hexdigest()[:10]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_pitui_extension_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
