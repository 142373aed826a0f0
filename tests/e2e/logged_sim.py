"""The built-in simulated engine with a request log: `python tests/e2e/logged_sim.py LOG [sim flags]`.

Every chat completion it is asked for is appended to LOG as one JSON line, its body as it arrived
(`max_tokens`, `messages`, …), before the simulator answers it; the other flags are `python -m
agentx_tui.sim`'s. A test reads the log to see exactly what a run asked the server for.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import agentx_tui.sim.server as sim_server
from agentx_tui.sim.__main__ import main as sim_main

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def logged(app: App, log: Path) -> App:
    """`app` with the body of every POST to /v1/chat/completions appended to `log`, one line each."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/v1/chat/completions":
            await app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        with log.open("ab") as out:
            out.write(body.replace(b"\n", b" ") + b"\n")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await app(scope, replay, send)

    return wrapped


def run(argv: list[str]) -> int:
    log, rest = Path(argv[0]), argv[1:]
    create_app = sim_server.create_app

    def create_logged_app(*args: Any, **kwargs: Any) -> Any:
        return logged(create_app(*args, **kwargs), log)

    sim_server.create_app = create_logged_app  # type: ignore[assignment]
    return sim_main(rest)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
