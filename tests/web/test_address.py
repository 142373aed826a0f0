"""`--web [HOST:]PORT`: the values it takes, the ones it refuses (one sentence, exit 2), and the warning
for a page that other machines can reach."""

from __future__ import annotations

import argparse

import pytest

from agentx_tui.cli import main
from agentx_tui.web.address import WebAddress, parse_web_address


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("8080", "127.0.0.1", 8080),
        ("127.0.0.1:8080", "127.0.0.1", 8080),
        ("0.0.0.0:80", "0.0.0.0", 80),
        ("localhost:65535", "localhost", 65535),
        ("[::1]:8080", "::1", 8080),
        ("[::]:1", "::", 1),
        ("gpu-node.lan:8080", "gpu-node.lan", 8080),
    ],
)
def test_web_values(text: str, host: str, port: int) -> None:
    assert parse_web_address(text) == WebAddress(host, port)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("http", "has no port from 1 to 65535"),
        ("0", "has no port from 1 to 65535"),
        ("65536", "has no port from 1 to 65535"),
        ("-1", "has no port from 1 to 65535"),
        ("host:", "has no port"),
        (":8080", "names no host"),
        ("::1:8080", "write an IPv6 host in brackets"),
        ("[nope]:8080", "no IPv6 address inside its brackets"),
        ("http://host:8080", "is not [HOST:]PORT"),
        ("a b:8080", "is not [HOST:]PORT"),
    ],
)
def test_bad_web_values_say_why(text: str, needle: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        parse_web_address(text)


def test_a_bad_web_value_is_one_sentence_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--web", "localhost:http"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --web: 'localhost:http' has no port from 1 to 65535")
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("gpu-node.lan", False),  # a name is not resolved: the warning errs on the safe side
    ],
)
def test_only_loopback_goes_without_a_warning(host: str, loopback: bool) -> None:
    address = WebAddress(host, 8080)
    assert address.loopback is loopback
    warning = address.warning()
    if loopback:
        assert warning is None
    else:
        assert warning is not None
        assert "\n" not in warning
        assert "no authentication of its own" in warning
        assert f"{host}:8080" in warning


def test_the_printed_url_brackets_ipv6_and_names_this_machine_for_a_wildcard() -> None:
    assert WebAddress("::1", 8080).url == "http://[::1]:8080/"
    assert WebAddress("127.0.0.1", 80).url == "http://127.0.0.1:80/"
    assert "0.0.0.0" not in WebAddress("0.0.0.0", 8080).url
