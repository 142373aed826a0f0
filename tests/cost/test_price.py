from __future__ import annotations

import pytest

from agentx_tui.cost import resolve_price
from agentx_tui.errors import UsageError


@pytest.fixture(autouse=True)
def _no_user_file(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


def test_user_price_wins() -> None:
    choice = resolve_price(gpu_price=2.3, cost_profile=None, gpu_names=["NVIDIA H200"], sim_gpu="h100", gpus=None)
    assert choice is not None
    assert (choice.mode, choice.usd_per_gpu_hour, choice.gpus, choice.source) == (
        "rental",
        2.3,
        1,
        "--gpu-price",
    )


def test_profile_names_and_unknown_profile() -> None:
    rental = resolve_price(gpu_price=None, cost_profile="h200", gpu_names=[], sim_gpu=None, gpus=8)
    assert rental is not None and rental.mode == "rental" and rental.usd_per_gpu_hour == 2.90 and rental.gpus == 8
    also = resolve_price(gpu_price=None, cost_profile="H200-rental", gpu_names=[], sim_gpu=None, gpus=8)
    assert also is not None and also.usd_per_gpu_hour == 2.90
    with pytest.raises(UsageError) as info:
        resolve_price(gpu_price=None, cost_profile="a100", gpu_names=[], sim_gpu=None, gpus=None)
    assert "a100" in info.value.message and info.value.hint is not None and "h200-owned" in info.value.hint
    with pytest.raises(UsageError):
        resolve_price(gpu_price=1.0, cost_profile="h200", gpu_names=[], sim_gpu=None, gpus=None)
    with pytest.raises(UsageError):
        resolve_price(gpu_price=0.0, cost_profile=None, gpu_names=[], sim_gpu=None, gpus=None)


def test_owned_mode_swaps_board_power_for_measured_power() -> None:
    owned = resolve_price(gpu_price=None, cost_profile="h100-owned", gpu_names=[], sim_gpu=None, gpus=2)
    assert owned is not None and owned.mode == "owned"
    # 1.17 TCO at 700 W board power; energy = W/1000 × PUE 1.3 × 0.08 USD/kWh.
    fixed = 1.17 - 0.7 * 1.3 * 0.08
    assert owned.fixed_usd_per_gpu_hour == pytest.approx(fixed)
    assert owned.at_power(350.0) == pytest.approx(fixed + 0.35 * 1.3 * 0.08)
    assert owned.at_power(None) == pytest.approx(1.17)
    no_board = resolve_price(gpu_price=None, cost_profile="mi300x-owned", gpu_names=[], sim_gpu=None, gpus=1)
    assert no_board is not None and no_board.at_power(300.0) == pytest.approx(0.95)


def test_detected_gpu_then_simulated_gpu_then_nothing() -> None:
    detected = resolve_price(
        gpu_price=None, cost_profile=None, gpu_names=["NVIDIA H100 80GB HBM3"] * 4, sim_gpu="h200", gpus=None
    )
    assert detected is not None and detected.usd_per_gpu_hour == 2.00 and detected.gpus == 4
    assert "detected NVIDIA H100 80GB HBM3" in detected.source
    sim = resolve_price(gpu_price=None, cost_profile=None, gpu_names=["Tesla T4"], sim_gpu="h200", gpus=1)
    assert sim is not None and sim.usd_per_gpu_hour == 2.90 and "simulated h200" in sim.source
    assert resolve_price(gpu_price=None, cost_profile=None, gpu_names=[], sim_gpu=None, gpus=None) is None
