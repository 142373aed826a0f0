"""Workload files for tests that drive the real tiny model (4096-token context)."""

from __future__ import annotations

from pathlib import Path


def write_small_agent_workload(folder: Path, *, steps: int) -> Path:
    """A short agent loop that fits the tiny model: ~700 tokens of opening, +150 a step."""
    path = folder / "small.yaml"
    path.write_text(
        "description: a short agent loop that fits the tiny model\n"
        "shared_prefix_tokens: 600\n"
        "unique_prefix_tokens: 40\n"
        "first_message_tokens: 60\n"
        f"steps: {steps}\n"
        "output_tokens: 32\n"
        "tool_result_tokens: 120\n"
        "tool_latency_s: 0.2\n"
    )
    return path
