"""Real-engine launches shared by the reliability tests.

Each `--serve tiny` start-up costs ~35 s of mostly single-threaded work, so the launches that the
selected tests need are all started at once, as soon as the first test of this folder runs, and
overlap with each other and with the quick tests that come first (test_bad_input.py); each test then
acts on its own agentx-tui. Only launches whose test was collected start (running one test file does
not pay for the others). Test files run in name order, so the exit tests (test_exits.py) finish their
servers before the fault test (test_faults.py) times its ticks with its server alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.reliability._run import CliRun, clean_env, write_workload

SECRET_KEY = "sk-agentx-reliability-7f3a9c2e51d4"


@dataclass(frozen=True)
class LaunchSpec:
    test: str  # the test that acts on this launch
    args: tuple[str, ...]
    users: int = 2
    env: dict[str, str] = field(default_factory=dict)


LAUNCHES: dict[str, LaunchSpec] = {
    "hangup": LaunchSpec(
        "test_sighup_after_the_terminal_is_gone_stops_everything_and_writes_the_report",
        ("--record", "{dir}/hup.jsonl", "--report", "{dir}/hup.json"),
    ),
    "killed": LaunchSpec(
        "test_kill_9_while_recording_leaves_a_replayable_file_and_no_server", ("--record", "{dir}/killed.jsonl")
    ),
    "crash": LaunchSpec(
        "test_serve_frozen_then_resumed_then_crashed",
        ("--record", "{dir}/crash.jsonl", "--report", "{dir}/crash.json"),
        users=4,
        env={"AGENTX_API_KEY": SECRET_KEY},
    ),
}


@dataclass
class Launches:
    folder: Path
    runs: dict[str, CliRun] = field(default_factory=dict)

    def start(self, name: str) -> CliRun:
        if name not in self.runs:
            spec = LAUNCHES[name]
            workload = write_workload(self.folder)
            args = [a.replace("{dir}", str(self.folder)) for a in spec.args]
            self.runs[name] = CliRun(
                # A start-up that hangs fails inside the test's wait, with the server's last log lines.
                "--serve", "tiny", "--startup-timeout", "240",
                "-w", str(workload), "-u", str(spec.users), "--headless", *args,
                stderr_path=self.folder / f"{name}.err",
                env=clean_env(**spec.env),  # the launcher unpins the tiny model's CPU threads
            )  # fmt: skip
        return self.runs[name]


@pytest.fixture(scope="session", autouse=True)  # autouse: the launches start with the first test here
def serve_launches(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launches]:
    launches = Launches(tmp_path_factory.mktemp("serve"))
    selected = {getattr(item, "originalname", item.name) for item in request.session.items}
    try:
        for name, spec in LAUNCHES.items():
            if spec.test in selected:
                launches.start(name)
        yield launches
    finally:
        for run in launches.runs.values():
            run.cleanup()
