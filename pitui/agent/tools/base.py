"""The tool protocol: declarations in pi's shape, results as pi content blocks.

A tool is declared to the model as ``{"name", "description", "parameters"}`` (a JSON schema) and
returns a :class:`ToolResult` whose ``content`` is a list of pi content blocks
(``{"type": "text", "text": ...}`` or ``{"type": "image", "data": <base64>, "mimeType": ...}``).

Call tools through :func:`execute`: it checks the arguments against the schema, runs the tool and
turns every failure into an error result the model can read. It never raises, except
:class:`asyncio.CancelledError`, which propagates after the tool has cleaned up.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pitui.agent.tools.environment import Redactor, known_secrets, tool_environment
from pitui.session.shapes import content_text

log = logging.getLogger(__name__)

ContentBlock = dict[str, Any]


@dataclass
class ToolContext:
    """Where a tool runs: ``cwd`` resolves relative paths, ``output_dir`` keeps full outputs.

    ``env`` is the environment commands get (default: pitui's own without credential
    variables); ``secrets`` maps key values to their variable names for redaction (default:
    the credential values in pitui's environment). ``on_output`` receives output as a tool
    produces it (the bash tool: decoded text as it is read, not redacted: the caller does
    that). A tool that is cancelled with something worth keeping (the output a command printed
    before an abort) leaves it in ``partial``; the caller stores it instead of a bare note.

    ``guard``, when set, is awaited with the validated arguments just before the tool runs; a
    result it returns replaces the run (approval modes refuse this way, and the workspace takes
    its checkpoint there before a change; see :mod:`pitui.agent.workspace`).
    """

    cwd: Path
    output_dir: Path
    env: Mapping[str, str] | None = None
    secrets: Mapping[str, str] | None = None
    on_output: Callable[[str], None] | None = None
    partial: ToolResult | None = None
    guard: ToolGuard | None = None

    def command_env(self) -> dict[str, str]:
        return dict(self.env) if self.env is not None else tool_environment(os.environ, ())

    def redactor(self) -> Redactor:
        return Redactor(self.secrets if self.secrets is not None else known_secrets(os.environ))


@dataclass
class ToolResult:
    """What a tool returns; becomes a pi ``toolResult`` message (``isError``, ``details``)."""

    content: list[ContentBlock] = field(default_factory=list)
    is_error: bool = False
    details: dict[str, Any] | None = None

    @classmethod
    def from_text(
        cls, text: str, *, is_error: bool = False, details: dict[str, Any] | None = None
    ) -> ToolResult:
        return cls([{"type": "text", "text": text}], is_error=is_error, details=details)

    @classmethod
    def error(cls, message: str, *, details: dict[str, Any] | None = None) -> ToolResult:
        return cls.from_text(message, is_error=True, details=details)

    @property
    def text(self) -> str:
        """The text blocks joined with newlines (images left out)."""
        return content_text(self.content, "\n")


class ToolError(Exception):
    """A failure the model should read: the message is one sentence, shown as an error result."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class Tool(ABC):
    """A tool the model can call. Subclasses set ``name``, ``description`` and ``parameters``.

    ``read_only`` tools never change files: approval modes let them run and no checkpoint is
    taken before them.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    read_only: ClassVar[bool] = False

    def declaration(self) -> dict[str, Any]:
        """The declaration in pi's shape (as in a system message's ``toolsAdded``)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }

    def prepare_arguments(self, args: dict[str, Any]) -> dict[str, Any]:
        """Adjust raw arguments before validation (e.g. accept a legacy shape). Default: as is."""
        return args

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run with validated arguments; raise :class:`ToolError` for failures the model sees."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


ToolGuard = Callable[[Tool, dict[str, Any]], Awaitable[ToolResult | None]]
"""Awaited before a tool runs; returns a result to use instead of running it, or None."""


# --------------------------------------------------------------------------------------------
# Argument validation (a small subset of JSON schema: type, required, properties, items)
# --------------------------------------------------------------------------------------------


class ArgumentError(Exception):
    """An argument does not fit the tool's schema."""


_TYPE_PHRASES = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def json_type_name(value: Any) -> str:
    """The JSON type of a decoded value: string, number, boolean, array, object or null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _phrase(value: Any) -> str:
    name = json_type_name(value)
    return _TYPE_PHRASES.get(name, name)


def _coerce(value: Any, expected: str) -> tuple[bool, Any]:
    """Check ``value`` against one JSON type, accepting the usual model slips (``"10"``)."""
    if expected == "string":
        return isinstance(value, str), value
    if expected == "boolean":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return True, value.strip().lower() == "true"
        return False, value
    if expected in ("number", "integer"):
        number: Any = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                return False, value
        if isinstance(number, bool) or not isinstance(number, int | float):
            return False, value
        if number != number or number in (float("inf"), float("-inf")):
            return False, value
        if isinstance(number, float) and number.is_integer():
            number = int(number)
        if expected == "integer" and not isinstance(number, int):
            return False, value
        return True, number
    if expected in ("array", "object"):
        candidate = value
        if isinstance(value, str):  # models sometimes send nested JSON as a string
            try:
                candidate = json.loads(value)
            except ValueError:
                return False, value
        if expected == "array" and isinstance(candidate, list | tuple):
            return True, list(candidate)
        if expected == "object" and isinstance(candidate, dict):
            return True, candidate
        return False, value
    if expected == "null":
        return value is None, value
    return True, value  # unknown type keyword: accept


def _check(value: Any, schema: dict[str, Any], where: str) -> Any:
    expected = schema.get("type")
    if expected is not None:
        types = [expected] if isinstance(expected, str) else list(expected)
        for candidate in types:
            ok, coerced = _coerce(value, candidate)
            if ok:
                value = coerced
                break
        else:
            wanted = " or ".join(_TYPE_PHRASES.get(t, t) for t in types)
            raise ArgumentError(f"argument '{where}' must be {wanted}, not {_phrase(value)}.")
    if isinstance(value, dict) and (
        "properties" in schema or "required" in schema or schema.get("type") == "object"
    ):
        value = _check_object(value, schema, where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value = [_check(item, schema["items"], f"{where}[{i}]") for i, item in enumerate(value)]
    return value


def _check_object(value: dict[str, Any], schema: dict[str, Any], where: str) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required: list[str] = list(schema.get("required") or [])
    result = dict(value)
    for key in required:
        if result.get(key) is None:
            name = f"{where}.{key}" if where else key
            raise ArgumentError(f"missing required argument '{name}'.")
    for key, sub in properties.items():
        if key not in result:
            continue
        if result[key] is None and key not in required:
            del result[key]  # null for an optional argument means "not given"
            continue
        result[key] = _check(result[key], sub, f"{where}.{key}" if where else key)
    return result


def validate_arguments(schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """Check ``args`` against ``schema`` and return them (numbers/booleans/JSON coerced).

    Raises :class:`ArgumentError` with a one-sentence message.
    """
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            raise ArgumentError("the arguments are not valid JSON.") from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ArgumentError(f"the arguments must be a JSON object, not {_phrase(args)}.")
    return _check_object(args, schema, "")


async def execute(tool: Tool, args: Any, ctx: ToolContext) -> ToolResult:
    """Validate ``args``, run ``tool`` and return its result; failures become error results.

    Known key values are redacted from the result (text, details, error messages).
    Never raises, except :class:`asyncio.CancelledError` (and other ``BaseException``s such as
    ``KeyboardInterrupt``), which propagate after the tool has cleaned up.
    """
    result = await _execute(tool, args, ctx)
    return redact_result(result, ctx.redactor())


def redact_result(result: ToolResult, redactor: Redactor) -> ToolResult:
    """``result`` with the known key values replaced (text, details, error messages)."""
    if not redactor:
        return result
    return ToolResult(
        redactor.value(result.content),
        is_error=result.is_error,
        details=redactor.value(result.details) if result.details is not None else None,
    )


async def _execute(tool: Tool, args: Any, ctx: ToolContext) -> ToolResult:
    try:
        prepared = tool.prepare_arguments(args) if isinstance(args, dict) else args
        checked = validate_arguments(tool.parameters, prepared)
    except ArgumentError as exc:
        return ToolResult.error(f"Invalid arguments for the {tool.name} tool: {exc}")
    if ctx.guard is not None:
        try:
            refusal = await ctx.guard(tool, checked)
        except Exception as exc:  # fail closed: a call nobody could approve does not run
            log.exception("the guard of tool %s failed", tool.name)
            return ToolResult.error(
                f"The {tool.name} call was not run: checking it failed ({type(exc).__name__})."
            )
        if refusal is not None:
            return refusal
    try:
        result = await tool.run(checked, ctx)
    except ToolError as exc:
        return ToolResult.error(exc.message, details=exc.details)
    except Exception as exc:
        log.exception("tool %s failed", tool.name)
        return ToolResult.error(
            f"The {tool.name} tool failed unexpectedly: {type(exc).__name__}: {exc}"
        )
    if not isinstance(result, ToolResult):
        log.error("tool %s returned %r instead of a ToolResult", tool.name, type(result))
        return ToolResult.error(f"The {tool.name} tool returned no result.")
    return result


# --------------------------------------------------------------------------------------------
# Helpers shared by the file tools
# --------------------------------------------------------------------------------------------


def resolve_path(raw: str, cwd: Path) -> Path:
    """Resolve a path the model gave: ``~`` expanded, relative to ``cwd``, normalised.

    A leading ``@`` (a habit from mentions like ``@src/app.py``) is dropped when the literal path
    does not exist but the path without it does. Symlinks are not resolved.
    """
    text = raw.strip()
    if not text:
        raise ToolError("The path is empty.")
    if "\0" in text:
        raise ToolError("The path contains a NUL character.")

    def build(candidate: str) -> Path:
        expanded = os.path.expanduser(candidate)
        return Path(os.path.normpath(os.path.join(os.fspath(cwd), expanded)))

    path = build(text)
    if text.startswith("@") and len(text) > 1 and not os.path.lexists(path):
        stripped = build(text[1:])
        if os.path.lexists(stripped):
            return stripped
    return path


_OS_REASONS = {
    errno.ENOENT: "it does not exist",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EISDIR: "it is a directory",
    errno.ENOTDIR: "a parent of it is not a directory",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EFBIG: "the file is too large",
}


def os_error(action: str, path: Path, exc: OSError) -> ToolError:
    """A one-sentence :class:`ToolError` for an ``OSError`` (``Could not read PATH: reason.``)."""
    reason = _OS_REASONS.get(exc.errno or 0, exc.strerror or str(exc))
    return ToolError(f"Could not {action} {path}: {reason}.")


def format_size(size: int) -> str:
    """``512 B``, ``50 KB``, ``1.5 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        value = size / 1024
        return f"{value:.0f} KB" if value.is_integer() or value >= 10 else f"{value:.1f} KB"
    value = size / (1024 * 1024)
    return f"{value:.0f} MB" if value.is_integer() or value >= 10 else f"{value:.1f} MB"


def refuse_missing_cwd(raw: str, path: Path, cwd: Path) -> None:
    """A tool never re-creates a working directory that no longer exists (a session from
    another machine or a deleted checkout): a relative path, or one inside ``cwd``, is refused
    while ``cwd`` is not a directory."""
    if cwd.is_dir():
        return
    relative = not os.path.isabs(os.path.expanduser(raw.strip().removeprefix("@")))
    if relative or path == cwd or cwd in path.parents:
        raise ToolError(
            f"The working directory {cwd} does not exist, and pitui does not create it: use an "
            "absolute path elsewhere, or restart pitui where the project is (or with --cwd)."
        )
