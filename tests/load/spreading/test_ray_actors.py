"""Load workers as Ray actors on a real local Ray head: the run's totals equal the server's counters."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from agentx_tui.engine import free_port
from agentx_tui.errors import UsageError
from agentx_tui.load.spreading import ray_actors
from agentx_tui.load.spreading.protocol import Command

RAY = shutil.which("ray", path=str(Path(sys.executable).parent))


@pytest.fixture(scope="session")
def ray_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Ray head for the whole session, on this machine (2 CPUs), stopped afterwards."""
    if RAY is None:
        pytest.skip("Ray is not installed (the `ray` extra)")
    temp = tmp_path_factory.mktemp("ray")
    start = subprocess.run(
        [RAY, "start", "--head", "--port=0", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = re.search(r"ray start --address='([^']+)'", start.stdout + start.stderr)
    if start.returncode != 0 or found is None:
        pytest.fail(f"ray start failed: {start.stderr[-2000:]}")
    yield found.group(1)
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=60)


def test_ray_not_installed_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ray_actors.importlib.import_module

    def refuse(name: str) -> object:
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real(name)

    monkeypatch.setattr(ray_actors.importlib, "import_module", refuse)
    with pytest.raises(UsageError, match=r"--ray needs Ray, which is not installed.*agentx-tui\[ray\]"):
        ray_actors.import_ray()


class _Method:
    """An actor method: `.remote(...)` is awaited for its result (or its error)."""

    def __init__(self, result: object) -> None:
        self.result = result

    def remote(self, *args: object) -> Any:
        async def answer() -> object:
            if isinstance(self.result, BaseException):
                raise self.result
            return self.result

        return answer()


class _DyingRay:
    """`ray` as `RayWorker` uses it, for an actor that starts (in process 4321) and then dies."""

    def __init__(self) -> None:
        died = RuntimeError("The actor died unexpectedly before finishing this task.\n\tclass_name: LoadActor")
        self.actor = SimpleNamespace(start=_Method(4321), collect=_Method(died))
        self.killed: list[object] = []

    def remote(self, **options: object) -> Any:
        return lambda cls: SimpleNamespace(remote=lambda spec: self.actor)

    def kill(self, actor: object) -> None:
        self.killed.append(actor)


async def test_a_ray_actor_that_dies_is_named_by_its_process_and_rays_words() -> None:
    ray = _DyingRay()
    worker = ray_actors.RayWorker(ray, SimpleNamespace(index=1))  # type: ignore[arg-type]
    await worker.started(5)
    assert worker.pid == 4321 and worker.alive()
    with pytest.raises(ConnectionError):
        await worker.call(Command.COLLECT)
    assert not worker.alive()
    assert await worker.ended() == "Ray actor died: The actor died unexpectedly before finishing this task."
    await worker.close()
    assert ray.killed == [ray.actor]


@pytest.mark.slow
def test_a_run_on_ray_actors_matches_the_servers_counters(ray_head: str, tmp_path: Path) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "shared_prefix_tokens: 500\nunique_prefix_tokens: 50\nfirst_message_tokens: 50\n"
        "steps: 4\noutput_tokens: 20\ntool_result_tokens: 100\ntool_latency_s: 0.1\n"
    )
    port = free_port()
    sim = subprocess.Popen([sys.executable, "-m", "agentx_tui", "sim", "--port", str(port)])
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url)
        report = tmp_path / "r.json"
        env = {**os.environ, "RAY_ADDRESS": ""}
        run = subprocess.run(
            [
                sys.executable, "-m", "agentx_tui", "--attach", url, "--ray", ray_head,
                "--workers", "2", "-w", str(workload), "-u", "4", "--sessions", "8", "--headless",
                "--report", str(report),
            ],
            capture_output=True, text=True, timeout=240, env=env,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        data = json.loads(report.read_text())
    finally:
        sim.terminate()
        sim.wait(10)
    assert data["workers"] == 2 and data["sessions_completed"] == 8 and data["requests_failed"] == 0
    (endpoint,) = data["endpoints"]
    assert data["prompt_tokens"] == endpoint["prompt_tokens"] > 0
    assert data["output_tokens"] == endpoint["generation_tokens"] > 0
    assert data["requests_completed"] == endpoint["requests_finished"] == 32


def _wait_healthy(url: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/health", timeout=1.0).status_code == 200:
                return
        time.sleep(0.2)
    pytest.fail(f"the simulated engine at {url} did not start")
