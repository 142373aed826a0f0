#!/usr/bin/env bash
# Install Debian's `prometheus` package when its binary is missing, for the tests that read fleet
# telemetry through a real Prometheus (tests/telemetry/test_prometheus_real.py). Idempotent: when
# the binary is already there it returns at once, without touching apt.
#
# The tests start their own Prometheus on a loopback port with a temporary storage dir; the
# package's system service is neither wanted nor started (see the policy-rc.d guard below).
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 || [[ -x /usr/bin/prometheus ]]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || [[ $(id -u) != 0 ]]; then
    echo "setup-prometheus: no prometheus binary, and no root apt-get to install it;" \
        "the Prometheus tests will be skipped (install Debian's 'prometheus' package to run them)" >&2
    exit 0
fi

# Installing a daemon package on a machine with an init system starts its service (on :9090).
# A policy-rc.d that exits 101 tells invoke-rc.d / deb-systemd-invoke not to; containers usually
# ship one already, so only a temporary one is added, and removed again, when there is none.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
fi

echo "setup-prometheus: installing Debian's prometheus package" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists may be stale or absent on a fresh machine: update only when the install fails.
if ! apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1; then
    apt-get update -qq >/dev/null || true
    if ! apt-get install -y -qq --no-install-recommends prometheus >/dev/null; then
        # Not fatal: the suite still runs, and the Prometheus tests say why they are skipped.
        echo "setup-prometheus: WARNING: could not install prometheus; its tests will be skipped" >&2
        exit 0
    fi
fi
command -v prometheus >/dev/null
