"""What is sent: workload specs and the data they replay, and the prompt text built from them.

No asyncio and no network here: a workload is loaded, checked, scaled and turned into prompts as plain
data, before any server starts (the sending layer, `load/sending/`, puts it on the wire).
"""
