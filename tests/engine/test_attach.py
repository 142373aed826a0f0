"""Attaching to things that are not a vLLM server gives one clear sentence (exit 3)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from agentx_tui.engine import free_port, probe_server
from agentx_tui.engine.attach import normalize_url
from agentx_tui.errors import NotVllmError, TargetError


@pytest.fixture
def plain_http() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body>Hello from a web server</body></html>"
            self.send_response(404 if self.path != "/" else 200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


async def test_closed_port_is_a_target_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(TargetError) as err:
        await probe_server(url)
    assert err.value.exit_code == 3
    assert "Could not connect" in str(err.value)


async def test_plain_http_server_is_not_vllm(plain_http: str) -> None:
    with pytest.raises(NotVllmError) as err:
        await probe_server(plain_http)
    assert err.value.exit_code == 3
    assert "not an OpenAI-compatible vLLM server" in str(err.value)
    assert "HTTP 404 text/html" in str(err.value)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://h:8000/", "http://h:8000"),
        ("http://h:8000/v1", "http://h:8000"),
        ("h:8000", "http://h:8000"),
    ],
)
def test_normalize_url(given: str, expected: str) -> None:
    assert normalize_url(given) == expected
