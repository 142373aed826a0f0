"""AgentX's golden acceptance lengths (cost/golden.yaml, docs/metrics.md "Where the time went"): the
bundled table, which served model names find which row, the user's file and `--spec-golden`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui.cost import golden_length, load_golden
from agentx_tui.errors import UsageError


@pytest.fixture(autouse=True)
def _no_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_the_table_holds_inferencex_s_curves_with_their_sources() -> None:
    table = load_golden()
    assert "InferenceX" in table.source and table.date and table.thinking == "on"
    assert set(table.models) == {"dsv4", "glm5.2", "kimik2.5", "minimaxm3", "qwen3.5"}
    for key, row in table.models.items():
        assert set(row.thinking_on) == set(range(1, 9)), key  # k = 1…8
        assert row.run.startswith("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/"), key
        assert row.file.endswith(".yaml") and row.method in ("MTP", "EAGLE3"), key
    dsv4 = table.models["dsv4"]
    assert [dsv4.thinking_on[k] for k in (1, 2, 3, 4)] == [1.79, 2.27, 2.49, 2.54]
    assert dsv4.thinking_off[3] == 2.97
    assert table.models["qwen3.5"].thinking_on[3] == 3.39
    assert table.models["minimaxm3"].thinking_on[8] == 3.74


@pytest.mark.parametrize(
    ("served", "k", "length"),
    [
        ("deepseek-ai/DeepSeek-V4-Pro", 3, 2.49),
        ("deepseek-v4-pro-fp8", 1, 1.79),
        ("zai-org/GLM-5.2-FP8", 4, 3.33),
        ("moonshotai/Kimi-K2.5", 2, 2.43),
        ("MiniMaxAI/MiniMax-M3", 5, 3.35),
        ("Qwen/Qwen3.5-397B-A17B-FP8", 3, 3.39),
        ("deepseek-ai/DeepSeek-V4.1-Flash", 3, None),  # another model, another curve: not in the table
        ("zai-org/GLM-5.21", 3, None),
        ("MiniMaxAI/MiniMax-M3.5", 3, None),
        ("Qwen/Qwen3.5-27B", 3, None),
        ("agentx-tiny", 3, None),
        ("deepseek-ai/DeepSeek-V4-Pro", 9, None),  # k beyond the curve
    ],
)
def test_served_names_find_their_row(served: str, k: int, length: float | None) -> None:
    assert golden_length(served, k).length == length


def test_the_source_says_which_row_or_why_none() -> None:
    found = golden_length("deepseek-ai/DeepSeek-V4-Pro", 3)
    assert found.source == "DeepSeek V4 Pro MTP, thinking on, k = 3: InferenceX dsv4_mtp.yaml"
    assert golden_length("my-model", 3).source == "no golden acceptance length for 'my-model' (pass --spec-golden AL)"
    assert golden_length("deepseek-ai/DeepSeek-V4-Pro", 9).source.endswith("has no golden length at k = 9, thinking on")
    assert golden_length(None, 3).source == "the served model is not known (pass --spec-golden AL)"
    assert golden_length("deepseek-ai/DeepSeek-V4-Pro", None).length is None  # no speculation seen


def test_spec_golden_sets_it_for_any_model() -> None:
    assert golden_length("agentx-tiny", 3, override=3.7).length == 3.7
    assert golden_length("deepseek-ai/DeepSeek-V4-Pro", 3, override=2.6).model_dump() == {
        "length": 2.6,
        "source": "--spec-golden",
    }


def test_user_file_adds_models_and_chooses_the_thinking_mode(tmp_path: Path) -> None:
    user = tmp_path / "config" / "agentx-tui" / "golden-acceptance.yaml"
    user.parent.mkdir(parents=True)
    user.write_text(
        "thinking: off\n"  # YAML's bare `off` is a boolean: read as the word
        "models:\n"
        "  mine:\n"
        "    {name: Mine, method: MTP, match: ['^my-org/mine'], file: mine.yaml, run: local,\n"
        "     thinking_off: {2: 2.2}}\n"
    )
    table = load_golden()
    assert table.thinking == "off" and len(table.files) == 2 and "dsv4" in table.models
    assert golden_length("my-org/mine-7b", 2, table=table).length == 2.2
    assert golden_length("deepseek-ai/DeepSeek-V4-Pro", 3, table=table).length == 2.97  # its thinking-off curve
    assert golden_length("zai-org/GLM-5.2", 3, table=table).length is None  # no thinking-off curve


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: {x: {name: X, method: MTP, match: ['('], file: f, run: r}}\n", "bad field `models.x.match`"),
        (
            "models: {x: {name: X, method: MTP, match: [x], file: f, run: r, thinking_on: {3: 5.0}}}\n",
            "bad field `models.x.thinking_on`",
        ),
        ("thinking: sometimes\n", "bad field `thinking`"),
        ("models: [1, 2]\n", "bad field `models`"),
        ("- a\n", "must be a mapping"),
    ],
)
def test_a_bad_user_file_is_one_sentence(tmp_path: Path, text: str, message: str) -> None:
    user = tmp_path / "golden.yaml"
    user.write_text(text)
    with pytest.raises(UsageError) as err:
        load_golden(user)
    assert message in str(err.value) and str(user) in str(err.value)
    assert "\n" not in err.value.message
