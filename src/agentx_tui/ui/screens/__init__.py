"""Modal screens pushed over the dashboard."""

from agentx_tui.ui.screens.cost import CostScreen, PriceEdit
from agentx_tui.ui.screens.help import HelpScreen

__all__ = ["CostScreen", "HelpScreen", "PriceEdit"]
