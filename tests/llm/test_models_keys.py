"""Model names, the model table (read without importing litellm), and API key checks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pitui.llm.keys import KEY_VARIABLES, PLACEHOLDER_KEY, check_key
from pitui.llm.models import OWN_TABLE, ModelRef, model_info, table_path

# ---------------------------------------------------------------------------------------------
# ModelRef.parse


@pytest.mark.parametrize(
    ("value", "provider", "model_id"),
    [
        ("anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("openai/gpt-4.1", "openai", "gpt-4.1"),
        ("openrouter/anthropic/claude-sonnet-4.5", "openrouter", "anthropic/claude-sonnet-4.5"),
        ("hosted_vllm/Qwen/Qwen3-32B", "hosted_vllm", "Qwen/Qwen3-32B"),
        ("  ollama_chat/llama3  ", "ollama_chat", "llama3"),
        ("gpt-4.1", "openai", "gpt-4.1"),
        ("o3-mini", "openai", "o3-mini"),
        ("claude-sonnet-4-5", "", "claude-sonnet-4-5"),
        ("my-model", "", "my-model"),
    ],
)
def test_parse(value: str, provider: str, model_id: str) -> None:
    ref = ModelRef.parse(value)
    assert (ref.provider, ref.model_id) == (provider, model_id)


def test_litellm_name_round_trips() -> None:
    assert ModelRef.parse("openrouter/a/b").litellm_name == "openrouter/a/b"
    assert str(ModelRef.parse("anthropic/claude-sonnet-4-5")) == "anthropic/claude-sonnet-4-5"
    assert ModelRef.parse("my-model").litellm_name == "my-model"
    assert ModelRef.parse("gpt-4.1").litellm_name == "openai/gpt-4.1"


# ---------------------------------------------------------------------------------------------
# model_info


def test_table_is_available() -> None:
    path = table_path()
    assert path is not None and path.is_file()


def test_known_anthropic_model() -> None:
    info = model_info(ModelRef.parse("anthropic/claude-sonnet-4-5"))
    assert info.known
    assert info.context_window == 200_000
    assert info.max_output and info.max_output > 0
    assert info.supports_reasoning
    assert info.input_cost > 0 and info.output_cost > info.input_cost


def test_known_openai_model() -> None:
    info = model_info(ModelRef.parse("openai/gpt-4.1"))
    assert info.known
    assert info.context_window and info.context_window >= 1_000_000
    assert info.max_output and info.max_output > 0
    assert info.input_cost > 0
    assert model_info(ModelRef.parse("gpt-4.1")).context_window == info.context_window


def test_ollama_chat_shares_ollama_entries() -> None:
    chat = model_info(ModelRef.parse("ollama_chat/llama3"))
    plain = model_info(ModelRef.parse("ollama/llama3"))
    assert plain.known and chat.known
    assert chat.context_window == plain.context_window


def test_unknown_model() -> None:
    info = model_info(ModelRef.parse("openai/my-model"))
    assert not info.known
    assert info.context_window is None
    assert info.max_output is None
    assert info.cost({"input": 1000, "output": 1000})["total"] == 0.0


def test_settings_overrides() -> None:
    settings = {"models": {"openai/my-model": {"contextWindow": 8192, "maxOutput": 1024}}}
    info = model_info(ModelRef.parse("openai/my-model"), settings["models"])
    assert info.context_window == 8192
    assert info.max_output == 1024
    # The override is keyed by the full name only.
    other = model_info(ModelRef.parse("openai/other-model"), settings["models"])
    assert other.context_window is None


def test_overrides_on_a_known_model_and_prices_per_million() -> None:
    overrides = {
        "anthropic/claude-sonnet-4-5": {
            "contextWindow": 1_000_000,
            "inputCost": 6,
            "outputCost": 22.5,
            "reasoning": False,
        }
    }
    info = model_info(ModelRef.parse("anthropic/claude-sonnet-4-5"), overrides)
    assert info.known
    assert info.context_window == 1_000_000
    assert info.max_output and info.max_output > 0  # not overridden: from the table
    assert info.input_cost == pytest.approx(6e-6)
    assert info.output_cost == pytest.approx(22.5e-6)
    assert not info.supports_reasoning


def test_invalid_override_values_are_ignored() -> None:
    overrides = {"openai/gpt-4.1": {"contextWindow": "big", "maxOutput": 0}}
    base = model_info(ModelRef.parse("openai/gpt-4.1"))
    info = model_info(ModelRef.parse("openai/gpt-4.1"), overrides)
    assert info.context_window == base.context_window
    assert info.max_output == base.max_output


def test_cost() -> None:
    info = model_info(ModelRef.parse("anthropic/claude-sonnet-4-5"))
    usage = {"input": 1000, "output": 200, "cacheRead": 5000, "cacheWrite": 300}
    cost = info.cost(usage)
    assert cost["input"] == pytest.approx(1000 * info.input_cost)
    assert cost["output"] == pytest.approx(200 * info.output_cost)
    assert cost["cacheRead"] == pytest.approx(5000 * info.cache_read_cost)
    assert cost["cacheWrite"] == pytest.approx(300 * info.cache_write_cost)
    assert cost["total"] == pytest.approx(
        cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    )
    assert set(cost) == {"input", "output", "cacheRead", "cacheWrite", "total"}
    assert info.cost({})["total"] == 0.0


def test_cost_with_override_prices() -> None:
    overrides = {"openai/my-model": {"inputCost": 1, "outputCost": 2}}
    info = model_info(ModelRef.parse("openai/my-model"), overrides)
    cost = info.cost({"input": 1_000_000, "output": 500_000})
    assert cost["input"] == pytest.approx(1.0)
    assert cost["output"] == pytest.approx(1.0)
    assert cost["total"] == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------------
# No litellm import on the fast paths (subprocesses: this test process may already have it)


def _litellm_imported_after(code: str) -> str:
    script = f"import sys\n{code}\nprint('litellm' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_model_info_does_not_import_litellm() -> None:
    code = (
        "from pitui.llm.models import OWN_TABLE, ModelRef, model_info, table_path\n"
        "assert table_path() is not None\n"
        "info = model_info(ModelRef.parse('anthropic/claude-sonnet-4-5'))\n"
        "assert info.known and info.context_window == 200000, info"
    )
    assert _litellm_imported_after(code) == "False"


@pytest.mark.slow
def test_cli_session_and_llm_packages_do_not_import_litellm() -> None:
    code = (
        "import pitui.cli, pitui.session\n"
        "import pitui.llm.models, pitui.llm.keys, pitui.llm.errors, pitui.llm.stream\n"
        "import pitui.llm.routes, pitui.llm.apis.openai_completions"
    )
    assert _litellm_imported_after(code) == "False"


# ---------------------------------------------------------------------------------------------
# check_key


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for names in KEY_VARIABLES.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_present_key(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    check = check_key(ModelRef.parse("anthropic/claude-sonnet-4-5"), None)
    assert check.api_key == "sk-ant-test"
    assert check.problem is None


def test_second_variable_for_a_provider(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("GOOGLE_API_KEY", "g-key")
    check = check_key(ModelRef.parse("gemini/gemini-2.5-pro"), None)
    assert (check.api_key, check.problem) == ("g-key", None)


def test_empty_key_counts_as_missing(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "")
    check = check_key(ModelRef.parse("openai/gpt-4.1"), None)
    assert check.api_key is None
    assert check.problem and "OPENAI_API_KEY" in check.problem


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("openai/gpt-4.1", "OPENAI_API_KEY"),
        ("gpt-4.1", "OPENAI_API_KEY"),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY"),
        ("openrouter/anthropic/claude-sonnet-4.5", "OPENROUTER_API_KEY"),
    ],
)
def test_missing_key_sentence_names_the_variable(
    no_keys: pytest.MonkeyPatch, model: str, variable: str
) -> None:
    check = check_key(ModelRef.parse(model), None)
    assert check.api_key is None
    assert check.problem is not None
    assert variable in check.problem
    assert check.problem.endswith(".")
    assert "\n" not in check.problem


def test_api_base_without_key_gives_a_placeholder(no_keys: pytest.MonkeyPatch) -> None:
    check = check_key(ModelRef.parse("openai/my-model"), "http://localhost:8000/v1")
    assert check.api_key == PLACEHOLDER_KEY
    assert check.problem is None


def test_api_base_with_a_real_key_uses_it(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-real")
    check = check_key(ModelRef.parse("openai/my-model"), "http://localhost:8000/v1")
    assert check.api_key == "sk-real"


@pytest.mark.parametrize(
    "model", ["ollama/llama3", "ollama_chat/qwen3", "lm_studio/m", "hosted_vllm/Qwen/Qwen3-32B"]
)
def test_keyless_providers(no_keys: pytest.MonkeyPatch, model: str) -> None:
    check = check_key(ModelRef.parse(model), None)
    assert (check.api_key, check.problem) == (None, None)


def test_providers_with_their_own_credentials_are_left_to_litellm(
    no_keys: pytest.MonkeyPatch,
) -> None:
    check = check_key(ModelRef.parse("bedrock/anthropic.claude-3-haiku"), None)
    assert (check.api_key, check.problem) == (None, None)


def test_bare_model_name_without_provider(no_keys: pytest.MonkeyPatch) -> None:
    check = check_key(ModelRef.parse("claude-sonnet-4-5"), None)
    assert check.api_key is None
    assert check.problem is not None
    assert "claude-sonnet-4-5" in check.problem
    assert "provider/model" in check.problem


def test_the_table_keeps_every_field_model_info_reads() -> None:
    """The table is decoded field by field (the start-up path): every entry keeps, unchanged,
    each field that model_info and the routing read, as a whole parse of the file has it."""
    import orjson

    from pitui.llm.models import litellm_table, table_path

    path = table_path()
    assert path is not None
    whole = orjson.loads(path.read_bytes())
    read = (
        "max_input_tokens",
        "max_tokens",
        "max_output_tokens",
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_read_input_token_cost",
        "cache_creation_input_token_cost",
        "supports_reasoning",
        "mode",
    )
    table = litellm_table()
    assert len(table) == len(whole) > 1000
    for name, entry in whole.items():
        assert table[name] == {k: entry[k] for k in read if k in entry}, name


def test_pitui_entries_add_models_and_correct_litellm_field_by_field() -> None:
    """pitui's own entries (own_models.json): a model litellm lacks is known with pi's figures;
    where both have a model, pitui's fields win and litellm's others stay."""
    from pitui.llm.models import in_litellm_table, litellm_table, model_table, own_table

    litellm = litellm_table()
    assert "gemini/gemini-3-pro-preview" not in litellm  # added by pitui
    preview = model_info(ModelRef.parse("google/gemini-3-pro-preview"))
    assert preview.known and preview.supports_reasoning
    assert (preview.context_window, preview.max_output) == (1_048_576, 65_536)
    assert (preview.input_cost, preview.output_cost, preview.cache_read_cost) == (
        2e-06,
        1.2e-05,
        2e-07,
    )
    assert preview.thinking_levels == ("low", "high")
    assert not in_litellm_table(ModelRef.parse("gemini/gemini-4-neon"))
    assert model_info(ModelRef.parse("gemini/gemini-4-neon")).max_output == 65_536
    # litellm gives Gemini 4 Argon its window as its output limit: pitui's figure wins, and
    # litellm's prices stay.
    argon = litellm["gemini/gemini-4-argon"]
    assert argon["max_output_tokens"] == 1_048_576
    info = model_info(ModelRef.parse("gemini/gemini-4-argon"))
    assert info.max_output == 32_768
    assert info.input_cost == argon["input_cost_per_token"]
    assert info.context_window == argon["max_input_tokens"]
    assert info.thinking_levels == ("low", "medium", "high")
    # A model pitui has no entry for is litellm's alone.
    assert model_table()["gemini/gemini-2.5-pro"] == litellm["gemini/gemini-2.5-pro"]
    assert model_info(ModelRef.parse("gemini/gemini-2.5-pro")).thinking_levels == ()
    # Every field of pitui's entries is one the table reader keeps (a misspelt one would be
    # silently dropped).
    fields = {
        "mode",
        "max_input_tokens",
        "max_output_tokens",
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_read_input_token_cost",
        "supports_reasoning",
        "thinking_levels",
    }
    raw = json.loads(OWN_TABLE.read_text())
    assert raw and all(set(entry) <= fields for entry in raw.values())
    assert own_table() == raw
