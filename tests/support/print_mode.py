"""Running ``python -m pitui`` (mostly ``-p``) as a real child process in tests, with an
isolated environment: its own config, data and state folders, no real API keys, litellm's
bundled cost map (offline), and the scripted LLM server as the model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.llm_server import ScriptedLLMServer


def isolated_env(tmp_path: Path, api_key: str = "sk-test") -> dict[str, str]:
    """This process's environment without API keys or a session folder, with XDG folders in
    ``tmp_path`` and ``api_key`` as the OpenAI key (the scripted server takes any)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PITUI_SESSION_DIR", None)
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        OPENAI_API_KEY=api_key,
    )
    return env


def model_args(llm: ScriptedLLMServer, sessions: Path) -> list[str]:
    """The scripted server as the model; sessions in ``sessions``."""
    return [
        "--model",
        "openai/test-model",
        "--api-base",
        f"{llm.url}/v1",
        "--session-dir",
        str(sessions),
    ]


def pitui_argv(*args: str) -> list[str]:
    """The command line of ``python -m pitui *args`` with this interpreter."""
    return [sys.executable, "-m", "pitui", *args]


def run_pitui(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """``pitui *args`` in ``cwd`` to its end, stdin empty, output captured as text."""
    return subprocess.run(
        pitui_argv(*args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
