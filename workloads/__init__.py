"""The workload presets, shipped as `agentx_tui.load.workload.presets` (setup.py): this folder is the
only copy. See README.md."""
