"""Keeping provider keys out of tools.

Commands the bash tool runs get pitui's environment minus every credential variable: the ones
pitui and litellm read a key, token or password from, and any name that looks like one (see
:func:`is_credential`). ``tools.bash.passEnv`` in the settings names variables to pass through
anyway (exact names or shell patterns such as ``GH_*``).

As a second guard, the values of credential variables are replaced by ``[redacted NAME]`` in
every tool's result (text and details) before it is stored in the session or sent to the model.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pitui.llm.keys import KEY_VARIABLES

if TYPE_CHECKING:
    from pitui.config.settings import Settings

CREDENTIAL_SUFFIXES = (
    "_KEY",
    "_KEY_ID",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASSWD",
    "_CREDENTIAL",
    "_CREDENTIALS",
)
"""A variable whose name ends like this holds a credential (``OPENAI_API_KEY``,
``AWS_SECRET_ACCESS_KEY``, ``GITHUB_TOKEN``, ``AZURE_CLIENT_SECRET``, ...)."""
CREDENTIAL_PARTS = ("API_KEY", "APIKEY", "SECRET", "PASSWORD")
"""... and so does one whose name contains one of these (``OPENAI_API_KEY_2``)."""
LITELLM_CREDENTIAL_VARIABLES = frozenset(
    {
        # Read by litellm's providers and not caught by the patterns above.
        "AWS_BEARER_TOKEN_BEDROCK",
        "AZURE_AD_TOKEN_PROVIDER",
        "GIGACHAT_CREDENTIALS",
        "WATSONX_ZENAPIKEY",
        "DATABRICKS_TOKEN",
    }
)
MIN_REDACTED_LENGTH = 8
"""Shorter values are not redacted (``1``, ``true``: they would garble ordinary output)."""

_PITUI_VARIABLES = frozenset(name for names in KEY_VARIABLES.values() for name in names)


def is_credential(name: str) -> bool:
    """True for a variable that holds (or may hold) a provider key, token or password."""
    upper = name.upper()
    return (
        upper in _PITUI_VARIABLES
        or upper in LITELLM_CREDENTIAL_VARIABLES
        or upper.endswith(CREDENTIAL_SUFFIXES)
        or any(part in upper for part in CREDENTIAL_PARTS)
    )


def pass_env_names(settings: Settings) -> tuple[str, ...]:
    """The ``tools.bash.passEnv`` setting: names (or patterns) of variables commands may see
    even though they look like credentials (a value of the wrong type was dropped, with a
    warning, when the settings were read)."""
    return tuple(item for item in settings.tools.bash.pass_env if item)


def _passed(name: str, pass_env: Iterable[str]) -> bool:
    return any(name == pattern or fnmatch.fnmatchcase(name, pattern) for pattern in pass_env)


def tool_environment(environ: Mapping[str, str], pass_env: Iterable[str]) -> dict[str, str]:
    """``environ`` without credential variables, except those ``pass_env`` names."""
    allowed = tuple(pass_env)
    return {
        name: value
        for name, value in environ.items()
        if not is_credential(name) or _passed(name, allowed)
    }


def known_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """Credential values in ``environ`` (long enough to be recognised), each with its name."""
    found: dict[str, str] = {}
    for name, value in sorted(environ.items()):
        if is_credential(name) and len(value) >= MIN_REDACTED_LENGTH and value not in found:
            found[value] = name
    return found


class Redactor:
    """Replaces known secret values in text (longest first, so no value leaks in part)."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self._pairs = sorted(secrets.items(), key=lambda item: -len(item[0]))

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def text(self, value: str) -> str:
        for secret, name in self._pairs:
            if secret in value:
                value = value.replace(secret, f"[redacted {name}]")
        return value

    def stream(self) -> StreamRedactor:
        """A redactor for text that arrives in pieces (a value may be split across two)."""
        return StreamRedactor(self)

    def byte_stream(self) -> ByteStreamRedactor:
        """:meth:`stream` for raw bytes (a command's output saved to a file as it arrives)."""
        return ByteStreamRedactor(self)

    @property
    def secrets(self) -> list[str]:
        return [secret for secret, _ in self._pairs]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """(secret value, its name), longest value first (the order they are replaced in)."""
        return list(self._pairs)

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string redacted (iterative: any depth)."""
        if isinstance(value, str):
            return self.text(value)
        if not isinstance(value, dict | list):
            return value
        root: Any = {} if isinstance(value, dict) else []
        stack: list[tuple[Any, Any]] = [(value, root)]
        while stack:
            source, target = stack.pop()
            items = source.items() if isinstance(source, dict) else enumerate(source)
            for key, item in items:
                if isinstance(item, dict | list):
                    child: Any = {} if isinstance(item, dict) else []
                    stack.append((item, child))
                elif isinstance(item, str):
                    child = self.text(item)
                else:
                    child = item
                if isinstance(target, dict):
                    target[self.text(key) if isinstance(key, str) else key] = child
                else:
                    target.append(child)
        return root


class StreamRedactor:
    """:meth:`Redactor.text` for streamed text: the end of a piece that could be the start of
    a secret value is held back until the next piece shows whether it is one."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._secrets = redactor.secrets
        self._held = ""

    def feed(self, text: str) -> str:
        if not self._secrets:
            return text
        text = self._redactor.text(self._held + text)
        hold = self._open_prefix(text)
        self._held = text[len(text) - hold :] if hold else ""
        return text[: len(text) - hold]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held

    def _open_prefix(self, text: str) -> int:
        """The length of the longest end of ``text`` that a secret value starts with."""
        longest = 0
        for secret in self._secrets:
            for size in range(min(len(secret) - 1, len(text)), longest, -1):
                if text.endswith(secret[:size]):
                    longest = size
                    break
        return longest


class ByteStreamRedactor:
    """:class:`StreamRedactor` for bytes: each secret's UTF-8 bytes become
    ``[redacted NAME]``; an end that could start one is held back until the next piece."""

    def __init__(self, redactor: Redactor) -> None:
        self._pairs = [
            (secret.encode("utf-8", "surrogateescape"), f"[redacted {name}]".encode())
            for secret, name in redactor.pairs
        ]
        self._held = b""

    def feed(self, data: bytes) -> bytes:
        if not self._pairs:
            return data
        data = self._held + data
        for secret, mark in self._pairs:
            if secret in data:
                data = data.replace(secret, mark)
        hold = 0
        for secret, _ in self._pairs:
            for size in range(min(len(secret) - 1, len(data)), hold, -1):
                if data.endswith(secret[:size]):
                    hold = size
                    break
        self._held = data[len(data) - hold :] if hold else b""
        return data[: len(data) - hold]

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return held
