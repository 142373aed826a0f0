"""The load's settings, frozen: made once from the command line and handed unchanged from the run to
every driver (in this process, in worker processes, in Ray actors), so nothing copies them field by field."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from agentx_tui.args import DEFAULT_USERS


@dataclass(frozen=True)
class LoadSettings:
    users: int = DEFAULT_USERS  # at the start (changeable live)
    seed: int = 0
    # `--sessions`: sessions (session trees) to start in all, over every user and worker; None: no limit.
    sessions: int | None = None
    max_think_s: float | None = None  # `--max-think`: every think time is capped at this
    # `--agentx`: whole-system idle gaps capped at this (load/sending/idle.py); not a cap on any think time.
    idle_cap_s: float | None = None
    window_s: float = 10.0  # the rate window of the client figures
    api_key: str | None = field(default=None, repr=False)
    # Scopes the text of session-file replays to this run: every worker of a run shares it, so their
    # passes of one file never collide, and another run's never hit this one's cache.
    nonce: int = field(default_factory=lambda: random.getrandbits(48))
    block_size: int | None = None  # the servers' KV block size for the ceiling; None: as probed
    connections: int | None = None  # requests on the wire at once; None: what the machine allows
    # `--join`: a user's first session from its first step, or joined at a stage drawn at random
    # (`midway`, agent workloads: load/sending/kinds/agent.py).
    join: Literal["start", "midway"] = "start"


@dataclass(frozen=True)
class IdStride:
    """One driver's share of the global user and session ids: offset, offset + stride, offset + 2·stride, …

    Worker w of N owns the ids ≡ w (mod N), so one and N workers draw the very same sessions."""

    offset: int = 0
    stride: int = 1

    def id(self, local: int) -> int:
        return self.offset + self.stride * local
