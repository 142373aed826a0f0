#!/usr/bin/env bash
# Install Debian's `chromium` package when its binary is missing, for the test that opens the
# `--web` dashboard in a real browser (tests/e2e/test_web_browser.py, driven by Playwright's Python
# package pointed at this browser: nothing downloads a browser of its own, `playwright install` is
# never run). Idempotent: when the binary is already there it returns at once, without touching apt.
set -euo pipefail

if [[ -x /usr/bin/chromium ]] || command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || [[ $(id -u) != 0 ]]; then
    echo "setup-chromium: no chromium binary, and no root apt-get to install it;" \
        "the browser test will be skipped (install Debian's 'chromium' package to run it)" >&2
    exit 0
fi

echo "setup-chromium: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists may be stale or absent on a fresh machine: update only when the install fails.
# Recommends stay out (they pull a desktop's worth of packages); the fonts the page needs come along
# as chromium's own dependencies.
if ! apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
    apt-get update -qq >/dev/null || true
    if ! apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
        # Not fatal: the suite still runs, and the browser test says why it is skipped.
        echo "setup-chromium: WARNING: could not install chromium; the browser test will be skipped" >&2
        exit 0
    fi
fi
command -v chromium >/dev/null
