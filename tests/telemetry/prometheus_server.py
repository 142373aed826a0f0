"""A real Prometheus (Debian's `prometheus` package; scripts/setup-prometheus.sh installs it) for the
tests: loopback, a free port, a 1-s scrape interval, a temporary storage dir.

Targets are given as file_sd groups (`set_targets`), so a running Prometheus takes new ones (a
launched vLLM, a fake fleet) without a restart; every group carries an ``agentx_group`` label that
the tests use as their `--selector`. `prometheus_server` is the session fixture: one Prometheus for
the whole session, however many modules import it (they share one process through `_shared`).
Without the binary the tests that need it are skipped, with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from agentx_tui.engine.ports import free_port

PROMETHEUS_BIN_ENV = "AGENTX_PROMETHEUS_BIN"
SCRAPE_INTERVAL_S = 1
TargetGroup = dict[str, object]

_CONFIG = """\
global:
  scrape_interval: {interval}s
  scrape_timeout: {interval}s
scrape_configs:
  - job_name: agentx
    static_configs: {static}
    file_sd_configs:
      - files: ['{sd}/*.json']
        refresh_interval: 1s
"""


def find_prometheus() -> str | None:
    """$AGENTX_PROMETHEUS_BIN (which may also name a missing file, to try the skip), else PATH, else
    where Debian's package puts it."""
    named = os.environ.get(PROMETHEUS_BIN_ENV)
    if named is not None:
        return named if os.access(named, os.X_OK) else None
    found = shutil.which("prometheus")
    if found is None and os.access("/usr/bin/prometheus", os.X_OK):
        found = "/usr/bin/prometheus"
    return found


def require_prometheus() -> str:
    binary = find_prometheus()
    if binary is None:
        pytest.skip("no prometheus binary: run scripts/setup-prometheus.sh (installs Debian's prometheus package)")
    return binary


class PrometheusServer:
    def __init__(self, binary: str, *, static: Sequence[TargetGroup] = ()) -> None:
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="agentx-prom-"))
        self.sd = self.dir / "sd"
        self.sd.mkdir()
        self.port = free_port("127.0.0.1")
        self.url = f"http://127.0.0.1:{self.port}"
        (self.dir / "prometheus.yml").write_text(
            _CONFIG.format(interval=SCRAPE_INTERVAL_S, static=json.dumps(list(static)), sd=self.sd)
        )
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30.0) -> None:
        """Start (or start again, on the same port and storage, after `kill`) and wait until ready."""
        log = (self.dir / "prometheus.log").open("ab")
        self._process = subprocess.Popen(
            [
                self.binary,
                f"--config.file={self.dir / 'prometheus.yml'}",
                f"--storage.tsdb.path={self.dir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1h",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"prometheus exited at start: {self.log_tail()}")
            try:
                if httpx.get(self.url + "/-/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"prometheus not ready within {timeout_s} s: {self.log_tail()}")

    def log_tail(self) -> str:
        path = self.dir / "prometheus.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL, as a crash would: no clean shutdown."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait(10)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def set_targets(self, name: str, groups: Sequence[TargetGroup]) -> None:
        """Write (atomically) the file_sd file ``name``; Prometheus picks it up within a few seconds."""
        tmp = self.sd / f".{name}.tmp"
        tmp.write_text(json.dumps(list(groups)))
        tmp.replace(self.sd / f"{name}.json")

    def remove_targets(self, name: str) -> None:
        (self.sd / f"{name}.json").unlink(missing_ok=True)

    def query(self, promql: str) -> list[dict[str, object]]:
        answer = httpx.post(self.url + "/api/v1/query", data={"query": promql}, timeout=5).json()
        result: list[dict[str, object]] = answer["data"]["result"]
        return result

    def wait_scraped(self, selector: str, count: int, *, samples: int = 2, timeout_s: float = 30.0) -> None:
        """Until ``count`` targets matching ``selector`` are up and each has ``samples`` scrapes stored."""
        deadline = time.monotonic() + timeout_s
        query = f"count(count_over_time(up{selector}[1m]) >= {samples})"
        while time.monotonic() < deadline:
            result = self.query(query)
            if result and float(result[0]["value"][1]) >= count:  # type: ignore[index]
                up = self.query(f"count(up{selector} == 1)")
                if up and float(up[0]["value"][1]) >= count:  # type: ignore[index]
                    return
            time.sleep(0.2)
        raise RuntimeError(f"Prometheus did not scrape {count} targets of {selector} within {timeout_s} s")


_shared: PrometheusServer | None = None
_users = 0


@pytest.fixture(scope="session")
def prometheus_server() -> Iterator[PrometheusServer]:
    """One Prometheus for the session (skipped, with the reason, when the binary is absent)."""
    global _shared, _users
    binary = require_prometheus()
    if _shared is None:
        _shared = PrometheusServer(binary)
        _shared.start()
    _users += 1
    try:
        yield _shared
    finally:
        _users -= 1
        if _users == 0:
            _shared.stop()
            _shared = None
