"""Your own traffic (docs/capture.md): a transparent proxy in front of the target, the proxied
agents as live sessions beside the simulated users, and their capture as AgentX session files.

    LiveProxy      the whole of it, as a run starts, ticks and stops it (most callers need only this)
    ProxyServer    the transparent streaming proxy; hands every model call to a `ProxyObserver`
    LiveSessions   the observer: calls → sessions (header, `user` field, or inferred), users-table rows,
                   `Completed`/`Failed` for the run's statistics, each session tree a task (ended when
                   idle for `--session-idle`), and the capture's session trees
                   (`_sessions.py` lists the modules that do each of those jobs)
    Capture        session files: no text, no token ids, no header values; salted block hashes
    Tokenizer      the server's own token ids of a call's prompt, off the request's path

The package never imports Textual; it reads `snapshot` and `measure` only.
"""

from agentx_tui.proxy._call import ProxiedCall
from agentx_tui.proxy._capture import Capture, CaptureCounts, prepare_capture_folder
from agentx_tui.proxy._eviction import DEFAULT_SESSION_IDLE_S
from agentx_tui.proxy._live import DEFAULT_HOST, LiveProxy, check_listen_address, parse_listen_address
from agentx_tui.proxy._server import (
    DEFAULT_SESSION_HEADER,
    ProxyHealth,
    ProxyObserver,
    ProxyServer,
    parent_header,
)
from agentx_tui.proxy._session import REAL_ID_BASE, TASK_ID_BASE, LiveSession
from agentx_tui.proxy._session_stats import ProxiedSessionCounts
from agentx_tui.proxy._sessions import LiveSessions
from agentx_tui.proxy._tokenize import Tokenizer, TokenizerCounts

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_SESSION_HEADER",
    "DEFAULT_SESSION_IDLE_S",
    "REAL_ID_BASE",
    "TASK_ID_BASE",
    "Capture",
    "CaptureCounts",
    "LiveProxy",
    "LiveSession",
    "LiveSessions",
    "ProxiedCall",
    "ProxiedSessionCounts",
    "ProxyHealth",
    "ProxyObserver",
    "ProxyServer",
    "Tokenizer",
    "TokenizerCounts",
    "check_listen_address",
    "parent_header",
    "parse_listen_address",
    "prepare_capture_folder",
]
