from __future__ import annotations

from pathlib import Path

import pytest

from agentx_tui.cost import load_presets
from agentx_tui.errors import UsageError


@pytest.fixture(autouse=True)
def _no_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_builtin_presets_carry_design_figures_source_and_date() -> None:
    presets = load_presets()
    assert "SemiAnalysis" in presets.source and presets.date == "2026-07"
    h200 = presets.gpus["h200"]
    assert (h200.owned_usd_per_gpu_hour, h200.rental_usd_per_gpu_hour, h200.board_power_w) == (
        1.22,
        2.90,
        700,
    )
    assert presets.gpus["gb300"].rental_usd_per_gpu_hour == 5.00
    assert len(presets.gpus) == 9 and len(presets.files) == 1


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA H200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100"),
        ("NVIDIA H100 PCIe", "h100"),
        ("NVIDIA B200", "b200"),
        ("NVIDIA GB200", "gb200"),  # not b200
        ("AMD Instinct MI300X", "mi300x"),
        ("h200", "h200"),
        ("NVIDIA GH200 480GB", None),
        ("NVIDIA A100-SXM4-80GB", None),
        ("cpu", None),
    ],
)
def test_gpu_names_match_presets(name: str, key: str | None) -> None:
    assert load_presets().for_gpu_name(name) == key


def test_user_file_overrides_and_adds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "config" / "agentx-tui" / "cost-presets.yaml"
    user.parent.mkdir(parents=True)
    user.write_text(
        "usd_per_kwh: 0.12\n"
        "gpus:\n"
        "  h200: {match: [H200], owned_usd_per_gpu_hour: 1.0, rental_usd_per_gpu_hour: 2.5,"
        " board_power_w: 700}\n"
        "  a100: {match: [A100], owned_usd_per_gpu_hour: 0.6, rental_usd_per_gpu_hour: 1.1}\n"
    )
    presets = load_presets()
    assert presets.usd_per_kwh == 0.12 and presets.pue == 1.3
    assert presets.gpus["h200"].rental_usd_per_gpu_hour == 2.5
    assert presets.gpus["h100"].rental_usd_per_gpu_hour == 2.00
    assert presets.for_gpu_name("NVIDIA A100-SXM4-80GB") == "a100"
    assert presets.files[-1] == str(user)


def test_bad_file_names_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpus:\n  h200: {match: [H200], owned_usd_per_gpu_hour: -1, rental_usd_per_gpu_hour: 2}\n")
    with pytest.raises(UsageError) as info:
        load_presets(bad)
    assert str(bad) in info.value.message and "gpus.h200.owned_usd_per_gpu_hour" in info.value.message
    bad.write_text("pue: [1\n")
    with pytest.raises(UsageError, match="not valid YAML"):
        load_presets(bad)
    bad.write_text("- a list\n")
    with pytest.raises(UsageError, match="must be a mapping"):
        load_presets(bad)
    with pytest.raises(UsageError, match="cannot be read"):
        load_presets(tmp_path / "missing.yaml")
