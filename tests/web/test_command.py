"""What each page runs: the user's flags, unchanged and safely quoted, less `--web` and the API key (which
goes by environment); what the page's title says; and what the serving process refuses up front."""

from __future__ import annotations

import os
import shlex
import socket
import sys
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from agentx_tui.cli import _long_options, build_parser, main, parse_args
from agentx_tui.run import build_plan
from agentx_tui.web import serve as web_serve
from agentx_tui.web.command import PAGE_MODULE, page_argv, page_command, page_environment, page_title

OPTIONS = _long_options(build_parser())


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--web", "8080", "-u", "2"], ["-u", "2"]),
        (["-u", "2", "--web=0.0.0.0:8080"], ["-u", "2"]),
        (["--we", "8080", "-w", "chat"], ["-w", "chat"]),  # argparse takes the abbreviation: so do we
        (["--web", "8080", "--workload", "chat", "--warmup", "3"], ["--workload", "chat", "--warmup", "3"]),
        (["--api-key", "sk-1", "--web", "8080", "--duration", "9"], ["--duration", "9"]),
        (["--api-key=sk-1", "--web", "8080"], []),
        (["--api", "sk-1", "--web", "8080"], []),
        (["--web", "8080", "--vllm-arg=--web=1"], ["--vllm-arg=--web=1"]),  # a value, not the flag
        (["--web", "8080", "--check", "ttft_p90_s <= 2"], ["--check", "ttft_p90_s <= 2"]),
    ],
)
def test_page_argv_drops_web_and_the_key_and_keeps_the_rest_in_order(argv: list[str], expected: list[str]) -> None:
    assert page_argv(argv, OPTIONS) == expected


def test_the_page_command_is_the_dashboard_with_its_flags_safely_quoted() -> None:
    flags = ["--check", "ttft_p90_s <= 2", "-w", "my sessions/$(rm -rf x)", "--record", "a'b.jsonl"]
    command = page_command(flags, python="/opt/py thon/bin/python")
    assert command.startswith("exec ")  # no shell left between the server and the run
    assert shlex.split(command) == ["exec", "/opt/py thon/bin/python", "-m", PAGE_MODULE, *flags]


def test_page_titles_say_what_runs() -> None:
    def title(*argv: str) -> str:
        return page_title(build_plan(parse_args(argv)))

    assert title() == "agentx-tui · simulated h200/llama-3.1-8b · coding-agent"
    assert title("--sweep", "auto", "-w", "chat") == "agentx-tui · simulated h200/llama-3.1-8b · chat · sweep auto"
    assert title("--serve", "tiny", "-w", "none") == "agentx-tui · vLLM tiny · observing, no load"
    assert title("--attach", "http://gpu:8000") == "agentx-tui · attach http://gpu:8000 · coding-agent"


def test_the_pages_environment_drops_no_color_and_carries_the_key() -> None:
    environ = {"NO_COLOR": "1", "TERM": "xterm", "AGENTX_API_KEY": "from-env"}
    page_environment(environ, api_key=None, server_pid=42)
    assert environ == {"TERM": "xterm", "AGENTX_API_KEY": "from-env", "AGENTX_WEB_SERVER_PID": "42"}
    page_environment(environ, api_key="from-flag", server_pid=42)  # --api-key wins, as in a terminal run
    assert environ["AGENTX_API_KEY"] == "from-flag"


class _FakeServer:
    """Records what serve_web would serve, and serves nothing."""

    made: ClassVar[list[_FakeServer]] = []

    def __init__(self, command: str, address: Any, title: str) -> None:
        self.command, self.address, self.title = command, address, title
        self.stopped_by = None
        self.environ = dict(os.environ)
        _FakeServer.made.append(self)

    def serve(self) -> None:
        self.environ = dict(os.environ)


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_FakeServer]]:
    _FakeServer.made.clear()
    monkeypatch.setattr(web_serve, "DashboardServer", _FakeServer)
    saved = dict(os.environ)  # serve_web sets the pages' environment in its own: give it back
    monkeypatch.delenv("AGENTX_API_KEY", raising=False)
    yield _FakeServer
    os.environ.clear()
    os.environ.update(saved)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_key_goes_to_the_pages_by_environment_never_on_their_command_line(
    fake_server: type[_FakeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    port = _free_port()
    assert main(["--web", str(port), "--api-key", "sk-secret-123", "-u", "3", "--interval", "0.5"]) == 0
    (server,) = fake_server.made
    assert "sk-secret-123" not in server.command
    assert "--api-key" not in server.command
    assert server.environ["AGENTX_API_KEY"] == "sk-secret-123"
    assert server.environ["AGENTX_WEB_SERVER_PID"] == str(os.getpid())
    assert "NO_COLOR" not in server.environ  # the pages get the server's environment: colour in the page
    assert shlex.split(server.command)[-4:] == ["-u", "3", "--interval", "0.5"]
    assert shlex.split(server.command)[1] == sys.executable
    assert server.title == "agentx-tui · simulated h200/llama-3.1-8b · coding-agent"


def test_a_loopback_page_prints_no_warning_and_another_host_prints_one_line(
    fake_server: type[_FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    assert main(["--web", f"127.0.0.1:{port}"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["--web", f"0.0.0.0:{port}"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "no authentication of its own" in err[0]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--headless"], "--web and --headless cannot be used together."),
        (["-w", "no-such-preset"], "no-such-preset"),
        (["--check", "no_such_figure >= 1"], "no_such_figure"),
    ],
)
def test_what_a_run_would_refuse_is_refused_before_serving(
    fake_server: type[_FakeServer], capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert main(["--web", str(_free_port()), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err
    assert len(err.splitlines()) == 1
    assert fake_server.made == []


def test_a_port_in_use_is_one_sentence_and_exit_2(
    fake_server: type[_FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["--web", str(port)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: Cannot serve the dashboard on 127.0.0.1:{port}: address already in use.")
    assert len(err.splitlines()) == 1
    assert fake_server.made == []


def test_the_flag_is_in_the_help() -> None:
    assert "--web [HOST:]PORT" in build_parser().format_help()
    assert parse_args(["--web", "9000"]).web.port == 9000
