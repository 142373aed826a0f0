"""Workloads for tests: files that fit the real tiny model (4096-token context), and shapes for the simulator."""

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


# One request a session, every length constant: the load is the same from its first seconds.
FIXED = """\
description: fixed shape - one request a session, constant lengths
shared_prefix_tokens: 2000
unique_prefix_tokens: 200
first_message_tokens: 100
steps: 1
output_tokens: 60
tool_result_tokens: 0
tool_latency_s: 0
"""
# Long sessions whose 2,000-token tool results pile up: every request's context longer than the last.
GROWING = """\
description: growing contexts - long sessions whose tool results pile up
shared_prefix_tokens: 2000
unique_prefix_tokens: 200
first_message_tokens: 100
steps: 400
output_tokens: 60
tool_result_tokens: 2000
tool_latency_s: 0.2
"""
