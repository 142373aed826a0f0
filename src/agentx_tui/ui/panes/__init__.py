"""The dashboard panes: seven always shown, three only when the run has what they show."""

from agentx_tui.ui.panes._base import Pane
from agentx_tui.ui.panes.cache import CachePane
from agentx_tui.ui.panes.cost import AGENTX_REFERENCE, CostPane
from agentx_tui.ui.panes.fleet import FleetPane
from agentx_tui.ui.panes.frontier import FrontierPane
from agentx_tui.ui.panes.gpu import GpuPane
from agentx_tui.ui.panes.kv import KvPane
from agentx_tui.ui.panes.log import LogPane
from agentx_tui.ui.panes.tasks import TasksPane
from agentx_tui.ui.panes.throughput import ThroughputPane
from agentx_tui.ui.panes.users import UsersPane

# In layout order (the grid places them in this order), which is not key order: see app.tcss.
# Frontier (a sweep), fleet (more than three endpoints) and tasks (once a task has completed) are
# hidden otherwise, so an ordinary run lays out as if they were not there; when shown they come before
# the users table, which grows longest during a sweep.
PANES: tuple[type[Pane], ...] = (
    GpuPane,
    KvPane,
    CachePane,
    ThroughputPane,
    CostPane,
    LogPane,
    FrontierPane,
    FleetPane,
    TasksPane,
    UsersPane,
)

__all__ = [
    "AGENTX_REFERENCE",
    "PANES",
    "CachePane",
    "CostPane",
    "FleetPane",
    "FrontierPane",
    "GpuPane",
    "KvPane",
    "LogPane",
    "Pane",
    "TasksPane",
    "ThroughputPane",
    "UsersPane",
]
