"""How a sweep's tier reads are spelled as report keys (docs/metrics.md; report/_keys.py)."""

from __future__ import annotations

from agentx_tui.report._keys import tier_report_keys
from agentx_tui.snapshot import TierRead


def test_tier_report_keys_use_the_tier_as_written() -> None:
    reads = (
        TierRead(
            tier=100.0,
            total_tokens_per_s_per_gpu=1.0,
            tokens_per_dollar_total=2.0,
            usd_per_million_total_tokens=3.0,
            total_tokens_per_s_per_gpu_ci_low=0.9,
            total_tokens_per_s_per_gpu_ci_high=1.2,
        ),
        TierRead(tier=37.5, note="above the fastest measured point"),
    )
    assert tier_report_keys(reads) == {
        "total_tokens_per_s_per_gpu_at_100": 1.0,
        "total_tokens_per_s_per_gpu_at_100_ci_low": 0.9,
        "total_tokens_per_s_per_gpu_at_100_ci_high": 1.2,
        "tokens_per_dollar_total_at_100": 2.0,
        "usd_per_million_total_tokens_at_100": 3.0,
        "total_tokens_per_s_per_gpu_at_37.5": None,
        "total_tokens_per_s_per_gpu_at_37.5_ci_low": None,
        "total_tokens_per_s_per_gpu_at_37.5_ci_high": None,
        "tokens_per_dollar_total_at_37.5": None,
        "usd_per_million_total_tokens_at_37.5": None,
    }
