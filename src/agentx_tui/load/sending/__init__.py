"""One process sending load: the driver, its users, the request sender and the SSE hot path.

Each workload kind has its loop in `kinds/`; everything else here is shared by every kind.

    Driver                          the users of one process and their live controls
    LoadSettings, DEFAULT_USERS     the load's frozen settings, handed unchanged to every driver
    IdStride                        one driver's share of the global user and session ids
    HealthProbe, ProcessHealth      this process's CPU, event-loop lag and CPU wait
"""

from agentx_tui.args import DEFAULT_USERS
from agentx_tui.load.sending.driver import Driver
from agentx_tui.load.sending.health import HealthProbe, ProcessHealth, judge
from agentx_tui.load.sending.settings import IdStride, LoadSettings

__all__ = ["DEFAULT_USERS", "Driver", "HealthProbe", "IdStride", "LoadSettings", "ProcessHealth", "judge"]
