"""The AgentX session file (workloads/README.md, docs/sessions.md, docs/capture.md): its one typed
definition, read by the replay and written by the capture through the same models.

    SessionFile, Call, SubAgent, Totals, TokenCounts   the file, as pydantic models (schema.py)
    read_sessions, read_session_file, read_session_bytes   → validated files in the reference format,
                                                       or one `WorkloadError` naming file and field
    session_file_paths, SESSION_SUFFIXES, HINT         a folder's session files; what they look like
    index_sessions, SessionRef, read_ref               where each session of a corpus is (no parsing);
                                                       one session read when it is wanted
    write_session_file, session_file_bytes             → JSON, written all or nothing, mode 0600
    normalise                                          the published variants → the reference format

A leaf: imports only `errors` (and pydantic).
"""

from agentx_tui.sessionfile.index import SessionRef, index_sessions, read_ref
from agentx_tui.sessionfile.reader import (
    HINT,
    SESSION_SUFFIXES,
    read_session_bytes,
    read_session_file,
    read_sessions,
    session_file_paths,
)
from agentx_tui.sessionfile.schema import Call, SessionFile, SubAgent, TokenCounts, Totals
from agentx_tui.sessionfile.variants import normalise
from agentx_tui.sessionfile.writer import session_file_bytes, write_session_file

__all__ = [
    "HINT",
    "SESSION_SUFFIXES",
    "Call",
    "SessionFile",
    "SessionRef",
    "SubAgent",
    "TokenCounts",
    "Totals",
    "index_sessions",
    "normalise",
    "read_ref",
    "read_session_bytes",
    "read_session_file",
    "read_sessions",
    "session_file_bytes",
    "session_file_paths",
    "write_session_file",
]
