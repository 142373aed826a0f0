"""Launching real vLLM: the command line, and bad launches failing in one sentence.

That stopping a launched vLLM leaves no process of its tree (API server, engine core, worker) is
checked on real launches through the command line, in tests/reliability/test_exits.py."""

from __future__ import annotations

import sys

import pytest

from agentx_tui.engine import LaunchedServer, launcher, start_sim, start_vllm
from agentx_tui.engine.launcher import KV_CACHE_METRICS_SAMPLE, kv_cache_metrics_sample, vllm_argv
from agentx_tui.errors import LaunchError


def test_argv_adds_prompt_token_details_mfu_metrics_and_tiny_defaults_once() -> None:
    argv, python = vllm_argv(
        "tiny",
        ["--max-num-seqs=4"],
        host="127.0.0.1",
        port=9,
        vllm_cmd=f"{sys.executable} -m vllm.entrypoints.openai.api_server",
        tiny=True,
    )
    assert python == sys.executable
    assert argv.count("--enable-prompt-tokens-details") == 1
    assert argv.count("--enable-mfu-metrics") == 1
    assert "--enforce-eager" in argv and "--served-model-name" in argv
    given = ["--enable-prompt-tokens-details", "--enable-mfu-metrics"]
    argv2, _ = vllm_argv("m", given, host="h", port=9, vllm_cmd="vllm", tiny=False)
    assert argv2 == [
        *("vllm", "serve", "m", "--host", "h", "--port", "9", *given),
        *("--kv-cache-metrics", "--kv-cache-metrics-sample", str(KV_CACHE_METRICS_SAMPLE)),
    ]
    # The user may turn the estimate off (its cost: docs/vllm.md); it is not added back then.
    argv3, _ = vllm_argv("m", ["--no-enable-mfu-metrics"], host="h", port=9, vllm_cmd="vllm", tiny=False)
    assert "--enable-mfu-metrics" not in argv3


@pytest.mark.parametrize(
    ("given", "sample"),
    [
        ([], KV_CACHE_METRICS_SAMPLE),  # ours: residency for the cache pane (docs/vllm.md)
        (["--kv-cache-metrics-sample=0.5"], 0.5),  # the user's rate, our switch
        (["--kv-cache-metrics"], 0.01),  # the user's switch, vLLM's own default rate
        (["--no-kv-cache-metrics"], None),  # the user's choice wins
        (["--disable-log-stats"], None),  # vLLM needs its stats logging for them
    ],
)
def test_argv_asks_for_kv_residency_unless_told_otherwise(given: list[str], sample: float | None) -> None:
    argv, _ = vllm_argv("m", given, host="h", port=9, vllm_cmd="vllm", tiny=False)
    assert argv.count("--kv-cache-metrics") <= 1 and argv.count("--kv-cache-metrics-sample") <= 1
    assert kv_cache_metrics_sample(argv) == sample


async def test_the_simulators_options_reach_its_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []

    async def fake_start(argv: list[str], *args: object) -> LaunchedServer:
        started.append(argv)
        return LaunchedServer(url="http://x", label="sim", process=None)  # type: ignore[arg-type]

    monkeypatch.setattr(launcher, "_start", fake_start)
    server = await start_sim("h100", port=9, cpu_kv_gb=500.0, cpu_kv_gbps=450.0)
    assert started[0][-4:] == ["--cpu-kv-gb", "500.0", "--cpu-kv-gbps", "450.0"]
    assert server.kv_cache_metrics_sample == 1.0  # the simulator records every block
    await start_sim("h100", port=9)  # off by default: no tier on its command line
    assert "--cpu-kv-gb" not in started[1]
    await start_sim("h100", port=9, max_num_batched_tokens=2048, spec="3:2.5")
    assert started[2][-4:] == ["--max-num-batched-tokens", "2048", "--spec", "3:2.5"]
    assert "--spec" not in started[1] and "--max-num-batched-tokens" not in started[1]


async def test_missing_model_path_is_a_clear_launch_error() -> None:
    with pytest.raises(LaunchError) as err:
        await start_vllm("/no/such/model/dir")
    assert err.value.exit_code == 3
    assert "does not exist" in str(err.value)


async def test_a_server_that_exits_during_startup_reports_its_last_lines() -> None:
    crash = f"{sys.executable} -c \"import sys; print('loading weights'); print('RuntimeError: boom'); sys.exit(7)\""
    with pytest.raises(LaunchError) as err:
        await start_vllm("some/model", vllm_cmd=crash, timeout_s=30)
    assert "exited during start-up (exit 7): RuntimeError: boom" in str(err.value)
    assert err.value.log_tail[-2:] == ["loading weights", "RuntimeError: boom"]


@pytest.mark.vllm
@pytest.mark.slow
async def test_real_vllm_rejecting_a_flag_fails_with_its_own_message() -> None:
    with pytest.raises(LaunchError) as err:
        await start_vllm("tiny", ["--no-such-flag"], timeout_s=120)
    assert "exited during start-up" in str(err.value)
    assert any("no-such-flag" in line for line in err.value.log_tail)
