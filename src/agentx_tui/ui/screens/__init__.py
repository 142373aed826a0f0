"""Modal screens pushed over the dashboard."""

from agentx_tui.ui.screens.cost import CostScreen, PriceEdit
from agentx_tui.ui.screens.help import HelpScreen
from agentx_tui.ui.screens.workload import WorkloadScreen

__all__ = ["CostScreen", "HelpScreen", "PriceEdit", "WorkloadScreen"]
