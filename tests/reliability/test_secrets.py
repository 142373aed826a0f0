"""Secrets and safe defaults, end to end through the command line.

With a distinctive API key set, nothing agentx-tui writes (stdout, stderr, the report, the recording)
contains it, even when the server repeats the key back in every answer it can shape. The servers the
tool starts listen on 127.0.0.1; vLLM is started from an argument list, never through a shell; YAML is
loaded safely. (The dashboard's own masking of its log pane and screenshots is tested in
tests/ui/test_keys.py; the real engine's command line and socket in tests/reliability/test_faults.py.)
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentx_tui.engine.ports import free_port
from tests.reliability._run import CliRun, clean_env, listening_addresses, sim_server, write_workload
from tests.reliability.hostile import HostileServer

KEY = "sk-agentx-secret-d41d8cd98f00b204"
SRC = Path(__file__).resolve().parents[2] / "src" / "agentx_tui"


def _cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentx_tui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=clean_env(**env),
    )


@pytest.mark.slow
def test_a_key_repeated_by_the_server_never_reaches_any_output(tmp_path: Path) -> None:
    script = ("ok", "500", "malformed", "ok", "400", "ok")
    with HostileServer(chat_script=script, echo_secrets=True) as server:
        report, record = tmp_path / "r.md", tmp_path / "rec.jsonl"
        args = ("--attach", server.url, "-w", str(write_workload(tmp_path)), "-u", "2", "--headless")
        args += ("--duration", "4", "--report", str(report), "--record", str(record))
        with CliRun(*args, stderr_path=tmp_path / "err.txt", env=clean_env(VLLM_API_KEY=KEY)) as run:
            run.wait_ticks(2, 60)
            server.metrics_mode = "garbage"  # its garbage page repeats the key too
            rc = run.wait(30)
    assert rc == 0, run.stderr[-2000:]
    # The key really was in use, and the server really sent it back (model name, version, errors).
    assert f"Bearer {KEY}" in server.auth_seen
    assert server.chat_by_behaviour["500"] and server.chat_by_behaviour["malformed"]
    written = {"stdout": run.stdout, "stderr": run.stderr, "report": report.read_text(), "recording": ""}
    written["recording"] = record.read_text()
    for where, text in written.items():
        assert KEY not in text, f"the API key is in the {where}"
    assert "hostile-********" in written["report"]  # the echoed model name, masked


def test_a_key_repeated_in_an_error_page_is_masked_in_the_error(tmp_path: Path) -> None:
    with HostileServer(models_status=404, echo_secrets=True) as server:
        result = _cli("--attach", server.url, "--headless", cwd=tmp_path, AGENTX_API_KEY=KEY)
        assert server.auth_seen == {f"Bearer {KEY}"}
    assert result.returncode == 3, result.stderr
    assert "is not an OpenAI-compatible vLLM server" in result.stderr
    assert KEY not in result.stderr and KEY not in result.stdout


def test_the_simulator_listens_on_loopback_only(tmp_path: Path) -> None:
    port = free_port()
    with sim_server(port, tmp_path / "sim.log") as proc:
        assert listening_addresses(proc.pid) == {("127.0.0.1", port)}


@pytest.mark.slow
def test_the_launched_simulator_listens_on_loopback_only(tmp_path: Path) -> None:
    with CliRun("--sim", "-w", "none", "--headless", "--duration", "30", stderr_path=tmp_path / "e") as run:
        run.wait_ticks(1, 60)
        (child,) = run.remember_tree()
        addresses = listening_addresses(child)
    assert len(addresses) == 1 and next(iter(addresses))[0] == "127.0.0.1"


def test_vllm_is_started_from_an_argument_list_never_a_shell(tmp_path: Path) -> None:
    # Shell syntax in the model name and in --vllm-cmd stays literal text: nothing creates the files.
    result = _cli(
        "--serve", "org/model;touch from-model", "--vllm-cmd", "/bin/echo $(touch from-cmd) `touch tick`",
        "-w", "none", "--headless", "--startup-timeout", "20",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert "exited during start-up" in result.stderr
    # echo printed its arguments verbatim: the server's log line shows them unexpanded.
    assert "$(touch from-cmd)" in result.stderr and "org/model;touch from-model" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_yaml_files_are_loaded_safely(tmp_path: Path) -> None:
    payload = '!!python/object/apply:os.system ["touch {}"]\n'
    workload = tmp_path / "w.yaml"
    workload.write_text("steps: " + payload.format(tmp_path / "from-workload"))
    result = _cli("--sim", "-w", str(workload), "--headless", cwd=tmp_path)
    assert result.returncode == 2 and "could not determine a constructor" in result.stderr

    config = tmp_path / "config" / "agentx-tui"
    config.mkdir(parents=True)
    (config / "cost-presets.yaml").write_text("gpus: " + payload.format(tmp_path / "from-presets"))
    result = _cli("--sim", "-w", "none", "--headless", cwd=tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))
    assert result.returncode == 2 and "cost presets file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

    assert not (tmp_path / "from-workload").exists() and not (tmp_path / "from-presets").exists()
    # And no loader that can build Python objects is used anywhere in the package.
    unsafe = re.compile(r"yaml\.(load|load_all|unsafe_load|full_load)\(|Loader=yaml\.(Loader|UnsafeLoader)")
    offenders = [str(p) for p in SRC.rglob("*.py") if unsafe.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
