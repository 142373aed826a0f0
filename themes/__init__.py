"""The bundled dashboard themes, shipped as `agentx_tui.ui.themes` (setup.py): this folder is the only
copy. See README.md."""
