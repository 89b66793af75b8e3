"""Provider keys never reach a tool: the bash tool's environment leaves out every credential
variable (unless ``tools.bash.passEnv`` names it), and known key values are redacted from every
tool's output before it is stored or sent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.llm_server import ScriptedLLMServer, text, tool_call

from pitui.agent.session import AgentSession
from pitui.agent.tools import BashTool, EditTool, ReadTool, ToolContext, execute
from pitui.agent.tools.environment import (
    is_credential,
    pass_env_names,
    tool_environment,
)
from pitui.config.settings import Settings
from pitui.llm.keys import KEY_VARIABLES
from pitui.session import SessionStore

SECRET = "sk-live-never-write-me-0123456789"
OTHER = "ghp_never_in_a_transcript_987654321"


@pytest.fixture
def keys_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-anthropic")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value-000111")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEYID0000")
    monkeypatch.setenv("GITHUB_TOKEN", OTHER)
    monkeypatch.setenv("PITUI_TEST_HARMLESS", "visible-value")


def test_credentials_are_recognised() -> None:
    for names in KEY_VARIABLES.values():
        for name in names:
            assert is_credential(name), name
    for name in (
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AZURE_AD_TOKEN",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "VERTEXAI_CREDENTIALS",
        "WATSONX_APIKEY",
        "WATSONX_ZENAPIKEY",
        "HF_TOKEN",
        "LITELLM_MASTER_KEY",
        "MY_SERVICE_SECRET",
        "DB_PASSWORD",
        "openai_api_key",
    ):
        assert is_credential(name), name
    for name in ("PATH", "HOME", "LANG", "TERM", "TIKTOKEN_CACHE_DIR", "SSH_AUTH_SOCK", "USER"):
        assert not is_credential(name), name


def test_every_credential_variable_litellm_reads_is_left_out() -> None:
    """Read litellm's provider code for the variables it takes a key, token or password from."""
    import litellm

    root = Path(litellm.__file__).parent
    sources = [root / "main.py", root / "utils.py", *sorted((root / "llms").rglob("*.py"))]
    read = re.compile(
        r"(?:get_secret_str|get_secret|os\.environ\.get|os\.getenv|os\.environ\[)\(?\s*"
        r"\"([A-Z][A-Z0-9_]+)\""
    )
    words = re.compile(r"(?:^|_)(?:KEY|APIKEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)(?:_|$)")
    names = set()
    for source in sources:
        names.update(read.findall(source.read_text(encoding="utf-8", errors="replace")))
    for source in (root / "llms").rglob("*.json"):
        text_ = source.read_text(encoding="utf-8", errors="replace")
        names.update(re.findall(r"\"api_key_env\"\s*:\s*\"([A-Z0-9_]+)\"", text_))
    credentials = {n for n in names if words.search(n)}
    # Variables that hold where a credential lives (a file, a folder, a URL), not the credential.
    pointers = {n for n in credentials if n.endswith(("_FILE", "_DIR", "_URL", "_PATH", "_URI"))}
    assert len(credentials - pointers) > 100  # the scan really found litellm's variables
    missed = sorted(n for n in credentials - pointers if not is_credential(n))
    assert missed == []


def test_tool_environment_leaves_credentials_out(keys_in_env: None) -> None:
    import os

    env = tool_environment(os.environ, ())
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"):
        assert name not in env
    assert env["PITUI_TEST_HARMLESS"] == "visible-value"
    assert env["PATH"] == os.environ["PATH"]
    kept = tool_environment(os.environ, ("GITHUB_TOKEN", "AWS_*"))
    assert kept["GITHUB_TOKEN"] == OTHER and "AWS_ACCESS_KEY_ID" in kept
    assert "OPENAI_API_KEY" not in kept


def test_pass_env_is_read_from_the_settings() -> None:
    assert pass_env_names(Settings()) == ()
    settings = Settings.from_dict(
        {"tools": {"bash": {"passEnv": ["GITHUB_TOKEN", 5, "NPM_TOKEN"]}}}
    )
    assert pass_env_names(settings) == ("GITHUB_TOKEN", "NPM_TOKEN")
    assert (
        pass_env_names(Settings.from_dict({"tools": {"bash": {"passEnv": "GITHUB_TOKEN"}}})) == ()
    )


@pytest.mark.slow
async def test_bash_sees_no_key(ctx: ToolContext, keys_in_env: None) -> None:
    result = await execute(BashTool(), {"command": 'env; echo "[$OPENAI_API_KEY]"'}, ctx)
    assert "[]" in result.text
    assert "PITUI_TEST_HARMLESS=visible-value" in result.text
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"):
        assert f"{name}=" not in result.text


@pytest.mark.slow
async def test_key_values_are_redacted_from_every_tool(ctx: ToolContext, keys_in_env: None) -> None:
    secret_file = ctx.cwd / ".env"
    secret_file.write_text(f"OPENAI_API_KEY={SECRET}\nTOKEN={OTHER}\n")
    read = await execute(ReadTool(), {"path": ".env"}, ctx)
    assert SECRET not in read.text and OTHER not in read.text
    assert "OPENAI_API_KEY=[redacted OPENAI_API_KEY]" in read.text
    assert "TOKEN=[redacted GITHUB_TOKEN]" in read.text
    edit = await execute(
        EditTool(), {"path": ".env", "edits": [{"oldText": "TOKEN=", "newText": "GH="}]}, ctx
    )
    assert SECRET not in json.dumps(edit.details) and OTHER not in json.dumps(edit.details)
    bash = await execute(BashTool(), {"command": "cat .env"}, ctx)
    assert SECRET not in bash.text and "[redacted OPENAI_API_KEY]" in bash.text


@pytest.mark.slow
async def test_a_passed_through_key_is_usable_but_still_redacted(
    tmp_path: Path, keys_in_env: None
) -> None:
    import os

    work = tmp_path / "w"
    work.mkdir()
    env = {**tool_environment(os.environ, ("GITHUB_TOKEN",)), "EXPECTED": OTHER}
    ctx = ToolContext(cwd=work, output_dir=tmp_path / "out", env=env)
    command = 'test "$GITHUB_TOKEN" = "$EXPECTED" && echo same; echo $GITHUB_TOKEN'
    result = await execute(BashTool(), {"command": command}, ctx)
    assert "same" in result.text
    assert OTHER not in result.text and "[redacted GITHUB_TOKEN]" in result.text


@pytest.mark.slow
async def test_printenv_in_a_run_never_reaches_the_session_or_the_next_request(
    tmp_path: Path, llm: ScriptedLLMServer, keys_in_env: None
) -> None:
    store = SessionStore.create(tmp_path / "sessions", str(tmp_path))
    agent = AgentSession(store, cwd=tmp_path, model="openai/test-model", api_base=f"{llm.url}/v1")
    llm.script(tool_call("bash", {"command": "printenv; echo $OPENAI_API_KEY"}), text("done"))
    assert (await agent.prompt("what is in the environment?")).ok
    assert llm.requests[0].headers.get("authorization") == f"Bearer {SECRET}"  # it was used
    store.close()
    assert store.path is not None
    stored = store.path.read_text()
    assert "PITUI_TEST_HARMLESS=visible-value" in stored  # the command did run
    for value in (SECRET, OTHER, "aws-secret-value-000111"):
        assert value not in stored
        assert value not in json.dumps(llm.requests[1].messages)
