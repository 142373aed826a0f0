"""The seven dashboard panes, in key order."""

from agentx_tui.ui.panes._base import Pane
from agentx_tui.ui.panes.cost import AGENTX_REFERENCE, CostPane
from agentx_tui.ui.panes.gpu import GpuPane
from agentx_tui.ui.panes.kv import KvPane
from agentx_tui.ui.panes.log import LogPane
from agentx_tui.ui.panes.prefix import PrefixPane
from agentx_tui.ui.panes.throughput import ThroughputPane
from agentx_tui.ui.panes.users import UsersPane

# In layout order (the grid places them in this order), which is not key order: see app.tcss.
PANES: tuple[type[Pane], ...] = (GpuPane, KvPane, PrefixPane, ThroughputPane, CostPane, LogPane, UsersPane)

__all__ = [
    "AGENTX_REFERENCE",
    "PANES",
    "CostPane",
    "GpuPane",
    "KvPane",
    "LogPane",
    "Pane",
    "PrefixPane",
    "ThroughputPane",
    "UsersPane",
]
