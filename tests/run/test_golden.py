"""Each endpoint's golden acceptance length as the run finds it (run/golden.py): by its served model and
draft length from the golden table, `--spec-golden` for any model; the aggregate keeps the one value."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui.run.golden import GoldenLengths
from agentx_tui.snapshot import EndpointReading
from agentx_tui.telemetry import aggregate_endpoints


@pytest.fixture(autouse=True)
def _no_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def endpoint(url: str, model: str, k: int | None, length: float | None, drafts: float = 10.0) -> EndpointReading:
    return EndpointReading(
        url=url,
        up=True,
        model=model,
        spec_draft_length=k,
        spec_acceptance_length=length,
        spec_drafts_per_s=drafts if length is not None else None,
    )


def test_the_table_s_row_for_the_model_and_its_draft_length() -> None:
    golden = GoldenLengths(None)
    a = golden.of(endpoint("a", "deepseek-ai/DeepSeek-V4-Pro", 3, 2.5))
    assert (a.spec_golden_acceptance_length, a.spec_acceptance_vs_golden) == (2.49, pytest.approx(2.5 / 2.49))
    assert a.spec_golden_source == "DeepSeek V4 Pro MTP, thinking on, k = 3: InferenceX dsv4_mtp.yaml"
    b = golden.of(endpoint("b", "deepseek-ai/DeepSeek-V4-Pro", 3, 2.4, drafts=30.0))
    agg = aggregate_endpoints([a, b])
    assert agg is not None and agg.spec_golden_acceptance_length == 2.49
    assert agg.spec_acceptance_length == pytest.approx((2.5 * 10 + 2.4 * 30) / 40)
    assert agg.spec_acceptance_vs_golden == pytest.approx(agg.spec_acceptance_length / 2.49)
    other_k = golden.of(endpoint("c", "deepseek-ai/DeepSeek-V4-Pro", 4, 2.5))
    assert other_k.spec_golden_acceptance_length == 2.54
    mixed = aggregate_endpoints([a, other_k])  # two golden lengths: the aggregate has none
    assert mixed is not None and mixed.spec_golden_acceptance_length is None and mixed.spec_acceptance_vs_golden is None
    plain = golden.of(endpoint("d", "deepseek-ai/DeepSeek-V4-Pro", None, None))  # does not speculate
    beside = aggregate_endpoints([a, plain])
    assert beside is not None and beside.spec_golden_acceptance_length == 2.49
    assert beside.spec_golden_source == a.spec_golden_source


def test_a_model_the_table_does_not_know_and_a_server_that_does_not_speculate() -> None:
    golden = GoldenLengths(None)
    tiny = golden.of(endpoint("a", "agentx-tiny", 3, 3.6))
    assert tiny.spec_golden_acceptance_length is None and tiny.spec_acceptance_vs_golden is None
    assert tiny.spec_golden_source == "no golden acceptance length for 'agentx-tiny' (pass --spec-golden AL)"
    plain = golden.of(endpoint("b", "deepseek-ai/DeepSeek-V4-Pro", None, None))
    assert plain.spec_golden_acceptance_length is None
    assert plain.spec_golden_source == "no speculative decoding seen: no draft length"


def test_spec_golden_is_every_model_s() -> None:
    golden = GoldenLengths(3.6)
    tiny = golden.of(endpoint("a", "agentx-tiny", 3, 3.636))
    assert (tiny.spec_golden_acceptance_length, tiny.spec_golden_source) == (3.6, "--spec-golden")
    assert tiny.spec_acceptance_vs_golden == pytest.approx(3.636 / 3.6)
