"""UI test helpers: snapshots in the top-level ``snapshots/`` folder, isolated dirs, a fixed
clock, and an app factory over a session file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_textual_snapshot
from support import fixtures

from pitui.agent.session import AgentSession
from pitui.config.settings import Settings
from pitui.session import SessionStore
from pitui.ui.app import PituiApp
from pitui.ui.keys import reports_shift_enter

ROOT = Path(__file__).resolve().parents[2]
FIXED_NOW = 1_768_470_000.0  # 2026-01-15T09:40:00Z, near the fixtures' own timestamps

# Snapshots live in <repo>/snapshots/<test module>/ (pytest-textual-snapshot is pinned).
pytest_textual_snapshot.SVGImageExtension.dirname = classmethod(  # type: ignore[method-assign]
    lambda cls, *, test_location: str(ROOT / "snapshots" / test_location.basename)
)


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[None]:
    """Keep the developer's config, data and state out of UI tests."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.delenv("PITUI_SESSION_DIR", raising=False)
    monkeypatch.delenv("PITUI_MODEL", raising=False)
    if "snap_compare" in request.fixturenames:
        # The status line shows the working directory with the home as ~: the test's folder
        # is the home, so a session working there shows the same path in every snapshot.
        monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    # The newline key the editor names depends on the terminal: tests see a plain xterm.
    for name in ("TERM_PROGRAM", "KITTY_WINDOW_ID", "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TMUX", raising=False)
    if reports_shift_enter():
        monkeypatch.setenv("TERM", "xterm-256color")
    yield


def fixed_clock() -> float:
    return FIXED_NOW


def copy_fixture(name: str, tmp_path: Path) -> Path:
    """A private copy of a session fixture in ``tmp_path/sessions`` (tests may append to it)."""
    return fixtures.copy_fixture(name, tmp_path / "sessions")


def make_app(
    store: SessionStore,
    *,
    llm_url: str | None = None,
    model: str | None = "openai/test-model",
    settings: dict[str, Any] | None = None,
    api_base: str | None = None,
    thinking: str | None = None,
    **kwargs: Any,
) -> PituiApp:
    """An app over ``store`` with a deterministic clock; an agent only when ``model`` is set."""
    merged = Settings.from_dict(
        {"retry": {"baseDelayMs": 10}, "ui": {"cursorBlink": False}, **(settings or {})}
    )

    def agent_factory(s: SessionStore) -> AgentSession:
        return AgentSession(
            s,
            cwd=s.cwd or ".",
            model=model,
            api_base=api_base or (f"{llm_url}/v1" if llm_url else "http://127.0.0.1:9/v1"),
            thinking=thinking,
            settings=merged,
        )

    return PituiApp(
        store,
        agent_factory=agent_factory if model else None,
        settings=merged,
        clock=fixed_clock,
        **kwargs,
    )


@pytest.fixture
def app_factory(tmp_path: Path) -> Callable[..., PituiApp]:
    """``app_factory("pi-v3-branches.jsonl", llm_url=..., ...)`` → an app over a copy."""

    def factory(fixture: str | None = None, **kwargs: Any) -> PituiApp:
        if fixture is None:
            store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
        else:
            store = SessionStore.open(copy_fixture(fixture, tmp_path))
        return make_app(store, **kwargs)

    return factory
