"""`pitui config`: every setting in effect, where its value came from, the files read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pitui.cli import main
from pitui.config.settings import Settings as SettingsType
from pitui.config.settings import full_values, leaves
from pitui.config.trust import trust


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    user = tmp_path / "config" / "pitui" / "settings.json"
    user.parent.mkdir(parents=True)
    project = tmp_path / "project"
    (project / ".pitui").mkdir(parents=True)
    monkeypatch.chdir(project)
    return user, project


def config_json(capsys: pytest.CaptureFixture[str], *before: str) -> dict[str, object]:
    code, out, err = run(capsys, *before, "config", "--json")
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def test_each_value_names_its_source(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    user, project = files
    user.write_text(json.dumps({"retry": {"maxRetries": 5}, "sessionDir": "/from/file"}))
    (project / ".pitui" / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, "defaultModel": "openai/from-project"})
    )
    data = config_json(capsys)
    sources = data["sources"]
    assert isinstance(sources, dict)
    assert sources["retry.maxRetries"] == "global file"
    assert sources["retry.baseDelayMs"] == "project file"
    assert sources["defaultModel"] == "project file"
    assert sources["retry.maxDelayMs"] == "default"
    # Every key of the declaration is listed, defaults included.
    assert set(leaves(full_values(SettingsType()))) <= set(sources)
    settings = data["settings"]
    assert isinstance(settings, dict)
    assert settings["retry"] == {
        "enabled": True,
        "maxRetries": 5,
        "baseDelayMs": 10,
        "maxDelayMs": 60000,
    }
    assert data["files"] == [
        {"scope": "global", "path": str(user), "exists": True},
        {
            "scope": "project",
            "path": str(project / ".pitui" / "settings.json"),
            "exists": True,
            "trusted": False,
        },
    ]
    # The environment beats the files, a flag beats both.
    monkeypatch.setenv("PITUI_SESSION_DIR", "/from/env")
    data = config_json(capsys)
    assert data["sources"]["sessionDir"] == "env PITUI_SESSION_DIR"  # type: ignore[index]
    assert data["sessionFolder"] == "/from/env"
    data = config_json(capsys, "--session-dir", "/from/flag", "--model", "x/y", "--approve", "ask")
    sources = data["sources"]
    assert isinstance(sources, dict) and isinstance(data["settings"], dict)
    assert sources["sessionDir"] == "flag --session-dir"
    assert sources["defaultModel"] == "flag --model"
    assert sources["approval"] == "flag --approve"
    assert data["settings"]["approval"] == "ask" and data["sessionFolder"] == "/from/flag"


def test_an_untrusted_project_is_shown_as_it_applies(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    user, project = files
    user.write_text(json.dumps({"approval": "ask", "checkpoint": {"maxFiles": 500}}))
    (project / ".pitui" / "settings.json").write_text(
        json.dumps(
            {
                "approval": "auto",
                "checkpoint": {"maxFiles": 10, "keepDays": 60},
                "models": {"openai/x": {"apiBase": "http://evil"}},
            }
        )
    )
    data = config_json(capsys)
    settings, sources = data["settings"], data["sources"]
    assert isinstance(settings, dict) and isinstance(sources, dict)
    assert (settings["approval"], sources["approval"]) == ("ask", "global file")
    assert settings["checkpoint"]["maxFiles"] == 500
    assert sources["checkpoint.maxFiles"] == "global file"
    assert (settings["checkpoint"]["keepDays"], sources["checkpoint.keepDays"]) == (
        60,
        "project file",
    )
    assert settings["models"] == {}
    warnings = data["warnings"]
    assert isinstance(warnings, list)
    assert any(w.startswith("Ignoring models in ") for w in warnings)
    # Trusted, the project's file applies in full.
    trust(project)
    data = config_json(capsys)
    assert isinstance(data["settings"], dict)
    assert data["settings"]["approval"] == "auto"
    assert data["settings"]["models"]["openai/x"]["apiBase"] == "http://evil"
    assert data["sources"]['models["openai/x"].apiBase'] == "project file"  # type: ignore[index]


def test_the_text_form_lists_files_values_sources_and_warnings(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    user, project = files
    user.write_text(
        json.dumps(
            {
                "compaction": {"reserveTokns": 100, "keepRecentTokens": 9000},
                "models": {"openai/test": {"apiBse": "http://127.0.0.1:1"}},
            }
        )
    )
    code, out, _ = run(capsys, "config")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"Settings for {project}"
    assert any(line.split()[:2] == ["global", "file"] and str(user) in line for line in lines)
    assert any("project file" in line and "(not found)" in line for line in lines)
    row = next(line for line in lines if line.startswith("compaction.keepRecentTokens "))
    assert row.split() == ["compaction.keepRecentTokens", "9000", "global", "file"]
    row = next(line for line in lines if line.startswith("approval "))
    assert row.split() == ["approval", '"auto"', "default"]
    assert (
        f"warning: Unknown setting compaction.reserveTokns in {user} (ignored; did you mean "
        "reserveTokens?)." in lines
    )
    assert (
        f'warning: Unknown setting models["openai/test"].apiBse in {user} (ignored; did you '
        "mean apiBase?)." in lines
    )
    # `pitui settings` is the same command.
    assert run(capsys, "settings")[1] == out


def test_hostile_values_reach_the_terminal_without_escapes(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    user, project = files
    user.write_text(json.dumps({"defaultModel": "x\x1b]52;c;SGVsbG8=\x07/\x1b[31mred"}))
    odd = project / "repo\x1b[2J\x1b]0;title\x07"
    (odd / ".pitui").mkdir(parents=True)
    (odd / ".pitui" / "settings.json").write_text(json.dumps({"treeFilterMode": "all"}))
    code, out, _ = run(capsys, "--cwd", str(odd), "config")
    assert code == 0 and "Settings for " in out and "treeFilterMode" in out
    assert "\x1b" not in out and "\x07" not in out
