"""The Textual dashboard: the only package that imports textual.

run_dashboard(source, controls, *, theme=None, refresh_s=0.5, screenshot_dir=None,
              title="agentx-tui", secrets=())      runs it in this terminal until `q`
AgentXApp(...)                                       the same, as an App for pilot tests
"""

from agentx_tui.ui._themes import DEFAULT_THEME, MONO_THEME, user_theme_dir
from agentx_tui.ui.app import AgentXApp, run_dashboard

__all__ = ["DEFAULT_THEME", "MONO_THEME", "AgentXApp", "run_dashboard", "user_theme_dir"]
