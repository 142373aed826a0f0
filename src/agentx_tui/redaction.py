"""API keys never leave the process (docs/architecture.md): the one place that masks them (named `redaction`,
not `secrets`, so that it never shadows the standard library's module of that name).

A key can reach output in several spellings: as written, escaped inside a JSON string (a recording, a
report) or HTML-escaped inside an SVG screenshot. `redact` masks every spelling; every writer (the
error printer, the event log, the server-log buffer, the recorder, the report, the dashboard and its
screenshots) goes through it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "********"
# Masking a very short string would shred ordinary text; a key that short is no secret anyway.
_MIN_SECRET_LEN = 4


def _spellings(secret: str) -> set[str]:
    return {secret, json.dumps(secret)[1:-1], html.escape(secret), html.escape(secret, quote=False)}


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret masked, in each of the spellings it may take in our output."""
    for secret in secrets:
        if len(secret) < _MIN_SECRET_LEN:
            continue
        for form in _spellings(secret):
            text = text.replace(form, MASK)
    return text


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """`value` (mappings, lists, strings, numbers: a report) with every secret masked in its strings.

    A server's text reaches the report (model name, version, status lines), and a server may repeat the
    key it was sent; masking the finished value is the one place that covers them all."""
    secrets = [s for s in secrets if s]
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {redact(k, secrets) if isinstance(k, str) else k: redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, secrets) for v in value]
    return value
