"""Settings: ``<config dir>/settings.json`` deep-merged with ``<project>/.pitui/settings.json``.

This module is the one declaration of what a settings file may say: every key, its type and its
default. Each file is checked on its own, so a bad value is reported in one sentence naming the
file, the key and the type expected; that key then falls back to its default and everything
else in the file still applies (a typo never stops pitui from starting). Keys pitui does not
know, at any depth (``compaction.reserveTokns``, ``models["a/b"].apiBse``), are reported with
the nearest known key ("did you mean reserveTokens?") and have no effect.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from pitui.config.paths import config_dir
from pitui.config.trust import is_trusted
from pitui.retry import RetryPolicy

Tokens = Annotated[int, msgspec.Meta(ge=0)]
"""A number of tokens (0 or more)."""
Positive = Annotated[int, msgspec.Meta(ge=1)]
Milliseconds = Annotated[float, msgspec.Meta(ge=0)]
Dollars = Annotated[float, msgspec.Meta(ge=0)]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high"]
TreeFilter = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
ApprovalMode = Literal["auto", "ask", "read-only"]


class _Section(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """A settings object: camelCase keys in the file, snake_case attributes here."""


class UiSettings(_Section, kw_only=True):
    cursor_blink: bool = True


class RetrySettings(_Section, kw_only=True):
    """Retries of rate limits, overloads, 5xx replies, timeouts and cut streams (the rule
    itself: :class:`pitui.retry.RetryPolicy`)."""

    enabled: bool = True
    max_retries: Tokens = 3
    base_delay_ms: Milliseconds = 2000
    max_delay_ms: Milliseconds = 60000

    def policy(self) -> RetryPolicy:
        return RetryPolicy(
            enabled=self.enabled,
            max_retries=self.max_retries,
            base_delay=self.base_delay_ms / 1000,
            max_delay=self.max_delay_ms / 1000,
        )


class TokenOverrides(_Section, kw_only=True):
    """``compaction.modelOverrides["provider/model"]``: per-model token budgets."""

    reserve_tokens: Tokens | None = None
    keep_recent_tokens: Tokens | None = None


class CompactionConfig(_Section, kw_only=True):
    """``compaction``: as pi 1.6 (``enabled``, ``reserveTokens``, ``keepRecentTokens``,
    ``modelOverrides``), plus the estimator used for decisions."""

    enabled: bool = True
    reserve_tokens: Tokens | None = None
    keep_recent_tokens: Tokens | None = None
    model_overrides: dict[str, TokenOverrides] = {}
    estimator: Literal["chars4", "tiktoken"] = "chars4"

    def section(self) -> dict[str, Any]:
        """The keys the user set, as in the file (what compaction's resolution reads)."""
        return _to_json(self)


class BranchSummarySettings(_Section, kw_only=True):
    skip_prompt: bool = False
    reserve_tokens: Tokens = 16384


class BashSettings(_Section, kw_only=True):
    pass_env: list[str] = []
    """Variables (names or ``fnmatch`` patterns) commands see even though they look like
    credentials."""


class ReadSettings(_Section, kw_only=True):
    line_numbers: bool = False
    """Number the lines ``read`` shows (like ``cat -n``). Off by default, as in pi 1.6: the
    numbers cost about an eighth more input tokens on a typical source file."""


class ToolSettings(_Section, kw_only=True):
    bash: BashSettings = msgspec.field(default_factory=BashSettings)
    read: ReadSettings = msgspec.field(default_factory=ReadSettings)


class CheckpointConfig(_Section, kw_only=True):
    """``checkpoint``: workspace checkpoints on the session tree (:mod:`pitui.checkpoint`)."""

    enabled: bool = True
    exclude: list[str] = []
    """gitignore patterns left out, on top of the project's ``.gitignore`` and the defaults."""
    max_file_size_mb: Annotated[float, msgspec.Meta(ge=0.001)] = msgspec.field(
        default=10, name="maxFileSizeMB"
    )
    """Larger files are skipped (with a note)."""
    skip_binary_churn: bool = True
    """Skip binary files that change at every checkpoint."""
    max_files: Positive = 100_000
    """A folder with more files is not checkpointed."""
    keep_days: Annotated[float, msgspec.Meta(ge=0)] = 30
    """Other sessions' checkpoints older than this are pruned."""
    max_store_mb: Annotated[float, msgspec.Meta(ge=1)] = msgspec.field(
        default=2048, name="maxStoreMB"
    )
    """Then the oldest go until the store fits."""


class ModelSettings(_Section, kw_only=True):
    """``models["provider/model"]``: what the model table lacks or gets wrong for a model, and
    where and how it is served."""

    context_window: Positive | None = None
    max_output: Positive | None = None
    max_tokens: Positive | None = None
    reasoning: bool | None = None
    input_cost: Dollars | None = None
    """$ per million input tokens."""
    output_cost: Dollars | None = None
    """$ per million output tokens."""
    cache_read_cost: Dollars | None = None
    """$ per million tokens read from the prompt cache."""
    cache_write_cost: Dollars | None = None
    """$ per million tokens written to the prompt cache."""
    api_base: str | None = None
    """Where this model is served (a local server, a proxy); its own endpoint when unset."""
    api: (
        Literal[
            "anthropic-messages",
            "openai-completions",
            "openai-responses",
            "google-generative-ai",
            "litellm",
        ]
        | None
    ) = None
    """The wire API a custom model speaks (its provider's own when unset; ``litellm``: through
    litellm)."""
    num_ctx: Positive | None = None
    """Ollama: the context size to ask the server for (none by default, as pi: Ollama keeps
    its own; a size makes pitui call Ollama's own ``/api/chat`` through litellm)."""


class Settings(_Section, kw_only=True):
    """Everything a settings file may say, with its default.

    ``warnings`` holds the problems found while reading (one sentence each; shown, never
    fatal). It is not a settings key.
    """

    default_model: str | None = None
    default_thinking_level: ThinkingLevel = "off"
    session_dir: str | None = None
    tree_filter_mode: TreeFilter = "default"
    extensions: list[str] = []
    ui: UiSettings = msgspec.field(default_factory=UiSettings)
    retry: RetrySettings = msgspec.field(default_factory=RetrySettings)
    http_idle_timeout_ms: Milliseconds = 90_000
    """A stream silent this long (keep-alive pings count) is retried as stalled; 0: no limit."""
    http_connect_timeout_ms: Milliseconds = 15_000
    compaction: CompactionConfig = msgspec.field(default_factory=CompactionConfig)
    branch_summary: BranchSummarySettings = msgspec.field(default_factory=BranchSummarySettings)
    models: dict[str, ModelSettings] = {}
    tools: ToolSettings = msgspec.field(default_factory=ToolSettings)
    checkpoint: CheckpointConfig = msgspec.field(default_factory=CheckpointConfig)
    approval: ApprovalMode = "auto"
    """Before write, edit and bash: ``auto`` runs them, ``ask`` asks, ``read-only`` refuses.
    A value that is not one of these means ``ask`` (see :data:`SAFE_FALLBACKS`)."""
    allow: dict[str, list[str]] = {}
    """Allow-lists for ``ask`` mode, per tool: ``{"bash": ["git status*"], "edit": ["docs/*"]}``."""
    warnings: list[str] = msgspec.field(default_factory=list, name="~pitui~warnings")

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None = None, source: str = "settings") -> Settings:
        """Settings from a JSON object; bad values are dropped with a warning naming ``source``."""
        warnings: list[str] = []
        clean = check(values or {}, source, warnings)
        settings = msgspec.convert(clean, cls)
        settings.warnings.extend(warnings)
        return settings

    def to_dict(self) -> dict[str, Any]:
        """The settings that differ from the defaults, as a settings file would say them."""
        return _to_json(self)

    def models_section(self) -> dict[str, dict[str, Any]]:
        """``models`` as in the file (what the model table's overrides read)."""
        return {name: _to_json(value) for name, value in self.models.items()}


def _to_json(value: msgspec.Struct) -> dict[str, Any]:
    data = msgspec.to_builtins(value)
    data.pop("~pitui~warnings", None)
    return _pruned(data)


def _pruned(data: dict[str, Any]) -> dict[str, Any]:
    """Without unset values and sections left empty (at any depth)."""
    out: dict[str, Any] = {}
    for key, item in data.items():
        if isinstance(item, dict):
            item = _pruned(item)
        if item is not None and item != {}:
            out[key] = item
    return out


# ----------------------------------------------------------------------------- checking a file

KNOWN_KEYS = frozenset(
    f.encode_name for f in msgspec.structs.fields(Settings) if not f.encode_name.startswith("~")
)
SAFE_FALLBACKS: dict[tuple[str | int, ...], Any] = {("approval",): "ask"}
"""Keys whose bad value is replaced by the safe value rather than dropped for the default: a
typo in the approval mode must never mean ``auto``."""
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _path(where: str) -> list[str | int]:
    """``$.models[...].contextWindow`` → ``["models", "...", "contextWindow"]``."""
    out: list[str | int] = []
    for name, index in _SEGMENT.findall(where.removeprefix("$")):
        if name:
            out.append(name)
        else:
            out.append(int(index) if index.isdigit() else "...")
    return out


def _fails_inside(data: dict[str, Any], prefix: list[str | int]) -> list[str | int] | None:
    """The path of the first invalid value when it lies under ``prefix``, else None."""
    try:
        msgspec.convert(data, Settings)
    except msgspec.ValidationError as exc:
        path = _path(str(exc).rpartition(" - at `")[2].rstrip("`"))
        return path if path[: len(prefix)] == prefix else None
    return None


def _locate(data: dict[str, Any], path: list[str | int]) -> list[str | int]:
    """Resolve the ``[...]`` (an unnamed mapping key) segments of an error path to real keys."""
    resolved: list[str | int] = []
    node: Any = data
    for segment in path:
        if segment == "..." and isinstance(node, dict):
            saved = dict(node)
            culprit = None
            try:
                for key, value in saved.items():
                    node.clear()
                    node[key] = value
                    if _fails_inside(data, [*resolved, "..."]) is not None:
                        culprit = key
                        break
            finally:
                node.clear()
                node.update(saved)
            if culprit is None:
                break
            segment = culprit
        resolved.append(segment)
        try:
            node = node[segment]
        except (KeyError, IndexError, TypeError):
            break
    return resolved


def _key_name(path: list[str | int]) -> str:
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", segment):
            out += f".{segment}" if out else segment
        else:
            out += f"[{json.dumps(segment)}]"
    return out


_DROP = object()


def _struct_of(kind: Any) -> type[msgspec.Struct] | None:
    """The settings object a declared type holds (``Section`` or ``Section | None``)."""
    if typing.get_origin(kind) is dict:
        return None
    for candidate in (kind, *typing.get_args(kind)):
        if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
            return candidate
    return None


def _mapping_of(kind: Any) -> type[msgspec.Struct] | None:
    """The settings object a ``dict[str, Section]`` maps names to (None for other types)."""
    if typing.get_origin(kind) is dict:
        return _struct_of(typing.get_args(kind)[1])
    return None


def unknown_keys(
    values: Any, kind: type[msgspec.Struct] = Settings, path: tuple[str, ...] = ()
) -> list[tuple[str, str | None]]:
    """Every key of ``values`` (a settings object as JSON) that ``kind`` does not declare, at
    any depth, as ``(dotted key, nearest known key or None)``, in file order. Values of the
    wrong type are left to the type check."""
    if not isinstance(values, dict):
        return []
    fields = {f.encode_name: f for f in msgspec.structs.fields(kind)}
    known = [name for name in fields if not name.startswith("~")]
    out: list[tuple[str, str | None]] = []
    for key, value in values.items():
        if not isinstance(key, str) or key.startswith("~"):
            continue
        spec = fields.get(key)
        if spec is None:
            where: list[str | int] = [*path, key]
            out.append((_key_name(where), suggestion(key, known)))
            continue
        mapped = _mapping_of(spec.type)
        if mapped is not None:
            if isinstance(value, dict):
                for name, item in value.items():
                    out.extend(unknown_keys(item, mapped, (*path, key, str(name))))
            continue
        inner = _struct_of(spec.type)
        if inner is not None:
            out.extend(unknown_keys(value, inner, (*path, key)))
    return out


def suggestion(key: str, known: list[str]) -> str | None:
    """The known key a typo most likely meant (case-insensitive first, then by similarity)."""
    for name in known:
        if name.lower() == key.lower():
            return name
    lowered = {name.lower(): name for name in known}
    close = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[close[0]] if close else None


def check(values: dict[str, Any], source: str, warnings: list[str]) -> dict[str, Any]:
    """A copy of ``values`` without the values that do not fit the declaration, with one
    warning per value dropped and one per key pitui does not know (at any depth)."""
    data = {k: copy.deepcopy(v) for k, v in values.items() if not k.startswith("~")}
    for key, nearest in unknown_keys(data):
        hint = f"; did you mean {nearest}?" if nearest else ""
        warnings.append(f"Unknown setting {key} in {source} (ignored{hint}).")
    for _ in range(200):
        try:
            msgspec.convert(data, Settings)
            return data
        except msgspec.ValidationError as exc:
            problem, _, where = str(exc).rpartition(" - at `")
            path = _locate(data, _path(where.rstrip("`")))
            if not path:
                warnings.append(f"Ignoring {source}: {problem}.")
                return {}
            parent: Any = data
            for segment in path[:-1]:
                parent = parent[segment]
            fallback = SAFE_FALLBACKS.get(tuple(path), _DROP)
            if fallback is _DROP:
                del parent[path[-1]]
            else:
                parent[path[-1]] = fallback
            using = "" if fallback is _DROP else f"; using {fallback}, the safe choice"
            warnings.append(
                f"Ignoring setting {_key_name(path)} in {source}: "
                f"{problem[:1].lower()}{problem[1:]}{using}."
            )
    return {}


# ----------------------------------------------------------------------------- files


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def read_settings_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    """One settings file as a JSON object ({} when missing or unreadable, with a warning)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        warnings.append(f"Could not read settings {path}: {reason}.")
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        warnings.append(f"Ignoring settings {path}: invalid JSON ({exc}).")
        return {}
    if not isinstance(value, dict):
        warnings.append(f"Ignoring settings {path}: it is not a JSON object.")
        return {}
    return value


def user_settings_path() -> Path:
    return config_dir() / "settings.json"


def project_settings_path(cwd: str | Path) -> Path:
    return Path(cwd) / ".pitui" / "settings.json"


PROJECT_KEYS = frozenset(
    {
        "defaultModel",
        "defaultThinkingLevel",
        "retry",
        "compaction",
        "branchSummary",
        "treeFilterMode",
        "ui",
        "checkpoint",
        "approval",
    }
)
"""What a project's own settings file may set before ``pitui trust``: how to work on the
project. The other keys are the user's to choose: ``sessionDir`` (where transcripts are
written), ``models`` (an ``apiBase`` would send the user's key to another host), ``tools``
(``passEnv`` hands credentials to commands), ``allow`` (commands run without asking) and
``extensions`` (code). A project's ``approval`` counts only where it is stricter than the
user's (:func:`pitui.checkpoint.settings.read_workspace_settings`)."""


def untrusted_project_keys(values: dict[str, Any], path: Path) -> list[str]:
    """Drop from ``values`` (a project file not trusted yet) the keys only the user may set;
    one warning naming them (empty when there are none)."""
    dropped = [key for key in values if key in KNOWN_KEYS and key not in PROJECT_KEYS]
    for key in dropped:
        del values[key]
    # The project's extensions have their own notice (pitui.agent.extensions).
    dropped = [key for key in dropped if key != "extensions"]
    if not dropped:
        return []
    return [
        f"Ignoring {', '.join(dropped)} in {path}: a project's settings may set only "
        f"{', '.join(sorted(PROJECT_KEYS))} until you run `pitui trust` in it."
    ]


@dataclass
class SettingsLayers:
    """What each settings file contributed, after checking: the user's (global) file and the
    project's, with the keys an untrusted project may not set removed."""

    user_file: Path
    user: dict[str, Any]
    project_file: Path | None = None
    project: dict[str, Any] = field(default_factory=dict)
    project_trusted: bool = False
    warnings: list[str] = field(default_factory=list)

    def merged(self) -> Settings:
        settings = msgspec.convert(deep_merge(self.user, self.project), Settings)
        settings.warnings.extend(self.warnings)
        return settings


def load_layers(cwd: str | None = None) -> SettingsLayers:
    """Both settings files, each checked on its own (see :func:`load_settings`)."""
    warnings: list[str] = []
    user_file = user_settings_path()
    layers = SettingsLayers(
        user_file,
        check(read_settings_file(user_file, warnings), str(user_file), warnings),
        warnings=warnings,
    )
    if cwd:
        project_file = project_settings_path(cwd)
        project = read_settings_file(project_file, warnings)
        layers.project_file = project_file
        layers.project_trusted = is_trusted(Path(cwd))
        if project and not layers.project_trusted:
            warnings.extend(untrusted_project_keys(project, project_file))
        layers.project = check(project, str(project_file), warnings)
    return layers


def load_settings(cwd: str | None = None) -> Settings:
    """The user's settings deep-merged with the project's (project values win). Until the
    user trusts the project, its file may set only :data:`PROJECT_KEYS`."""
    return load_layers(cwd).merged()


def full_values(value: Any) -> Any:
    """Settings as JSON with every key, defaults included (``to_dict`` keeps only what was
    set)."""
    if isinstance(value, msgspec.Struct):
        return {
            f.encode_name: full_values(getattr(value, f.name))
            for f in msgspec.structs.fields(value)
            if not f.encode_name.startswith("~")
        }
    if isinstance(value, dict):
        return {key: full_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [full_values(item) for item in value]
    return value


def leaves(values: dict[str, Any], path: tuple[str, ...] = ()) -> dict[str, Any]:
    """A settings object as ``{dotted key: value}``: objects are walked into, lists and
    scalars are values, and an empty object is a value of its own (``models: {}``)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        where = (*path, key)
        if isinstance(value, dict) and value:
            out.update(leaves(value, where))
        else:
            out[_key_name(list(where))] = value
    return out
