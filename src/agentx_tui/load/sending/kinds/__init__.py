"""One loop per workload kind: what a user does with one session of that kind."""
