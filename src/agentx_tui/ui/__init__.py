"""The Textual dashboard: the only package that imports textual.

AgentXApp(source, controls, *, theme=None, refresh_s=0.5, screenshot_dir=None, title="agentx-tui",
          secrets=())    renders a Snapshot stream (a live run's feed, or a recording's player);
                         `controls` are the run's LiveControls or the player's ReplayControls
"""

from agentx_tui.ui._themes import DEFAULT_THEME, MONO_THEME, user_theme_dir
from agentx_tui.ui.app import AgentXApp

__all__ = ["DEFAULT_THEME", "MONO_THEME", "AgentXApp", "user_theme_dir"]
