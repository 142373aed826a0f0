"""What the client side of a run measures: the simulated users' load, real agents through `--proxy`, or
both (docs/capture.md). One `ClientStats` counts them together, so every aggregate figure is of all
the traffic the servers see from here; the proxy's own state says how much of it is real.

Each tick: one `LoadSample` (the client figures, the client's health, the users table: real sessions
first, then simulated users) and the proxy's state. At the end: the load drains, the proxy stops
listening and writes every open captured session, in one place (`close`), whatever ended the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from agentx_tui.load import HealthBook, HealthProbe, LoadGenerator, LoadSample
from agentx_tui.measure import ClientStats
from agentx_tui.proxy import LiveProxy
from agentx_tui.snapshot import USERS_SHOWN, ProxyState


class Traffic:
    def __init__(self, load: LoadGenerator | None, proxy: LiveProxy | None, stats: ClientStats | None) -> None:
        """`stats`: the accounting both feed (the load's own, or one made for a proxy-only run)."""
        self.load = load
        self.proxy = proxy
        self.stats = stats
        # With no load of its own, this process is the whole client: its health is the client's.
        self._probe = HealthProbe() if load is None and proxy is not None else None
        self._health = HealthBook(workers=1)
        self._closed = False

    @property
    def measures(self) -> bool:
        """Whether there is client-side traffic to measure at all (else: observe the servers only)."""
        return self.load is not None or self.proxy is not None

    def set_events(self, on_event: Callable[[str], None]) -> None:
        if self.load is not None:
            self.load.on_event = on_event

    async def start(self) -> None:
        """The load first (its workers calibrate), then the proxy: agents may connect from then on."""
        if self._probe is not None:
            self._probe.start()
        if self.load is not None:
            await self.load.start()
        if self.proxy is not None:
            await self.proxy.start()

    async def sample(self) -> tuple[LoadSample | None, ProxyState | None, list[str]]:
        """This tick's client sample, the proxy's state and its new log lines."""
        proxy = self.proxy
        state = proxy.figures() if proxy is not None else None
        events = proxy.events() if proxy is not None else []
        if self.load is not None:
            sample = await self.load.sample()
        elif self.stats is not None and self._probe is not None:
            figures = self.stats.figures(time.monotonic())
            # No output tokens for the health: its CPU per token (the Throughput border, the report's
            # `client_cpu_us_per_token`) is what a token streamed by the load client cost it, and this
            # process streamed none of its own; divided by the agents' tokens it relays, it read as a
            # client cost ("12.8 K µs CPU/tok") that was the proxy's and the dashboard's. n/a instead.
            sample = LoadSample(figures, self._health.tick([self._probe.look()], 0))
        else:
            return None, state, events
        if proxy is not None:
            if state is not None:  # requests the agents have on the wire count as in flight too
                in_flight = sample.client.in_flight + state.in_flight
                sample = replace(sample, client=sample.client.model_copy(update={"in_flight": in_flight}))
            real = proxy.rows(USERS_SHOWN)
            rows = (*real, *sample.rows[: max(0, USERS_SHOWN - len(real))])
            states = dict(sample.states)
            for name, n in proxy.states().items():
                states[name] = states.get(name, 0) + n
            sample = replace(sample, rows=rows, states=states)
        return sample, state, events

    def reset_window(self) -> None:
        if self.load is not None:
            self.load.reset_window()
        elif self.stats is not None:
            self.stats.reset_window(time.monotonic())

    async def drain(self, timeout_s: float) -> bool:
        """The load's requests finish (or `timeout_s` passes); the proxy stops and writes its captures, so
        the run's last snapshot counts them."""
        drained = True
        if self.load is not None:
            drained = await self.load.drain(timeout_s)
        if self.proxy is not None:
            await self.proxy.close()
        return drained

    async def close(self) -> None:
        """Stop everything (safe to call twice, and after `drain`)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.proxy is not None:
                await self.proxy.close()
        finally:
            if self.load is not None:
                await self.load.stop()
            if self._probe is not None:
                await self._probe.stop()
