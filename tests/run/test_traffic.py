"""The client side of a run (run/traffic.py): what a proxy-only run says about the client's cost."""

from __future__ import annotations

import time

from agentx_tui.measure import ClientStats, Completed
from agentx_tui.proxy import LiveProxy
from agentx_tui.run.traffic import Traffic


async def test_a_proxy_only_run_has_no_client_cpu_per_token() -> None:
    """The client streamed no token of its own: its CPU over the agents' relayed tokens would be the
    proxy's and the dashboard's cost read as the client's ("12.8 K µs CPU/tok" on the border)."""
    now = time.monotonic()
    stats = ClientStats(10.0, now)
    traffic = Traffic(None, LiveProxy("http://127.0.0.1:9"), stats)
    await traffic.start()
    try:
        for tick in range(3):
            relayed = Completed(
                sent_at=now, first_token_at=now + 0.1, last_token_at=now + 1.0, ended_at=now + 1.0,
                prompt_tokens=500, cached_tokens=0, output_tokens=400, ceiling_tokens=None, ttft_s=0.1,
                decode_tokens_per_s=400.0,
            )  # fmt: skip
            stats.add(relayed)
            sum(i * i for i in range(200_000))  # some CPU for the process to have spent
            sample, state, _ = await traffic.sample()
            assert sample is not None and state is not None
            assert sample.client.totals.output_tokens == 400 * (tick + 1)  # the agents' tokens are counted
            assert sample.health.cpu_us_per_token is None and sample.health.run_cpu_us_per_token is None
    finally:
        await traffic.close()
