"""One process sending load: the driver, its users, the request sender and the SSE hot path.

Each workload kind has its loop in `kinds/`; everything else here is shared by every kind.
"""
