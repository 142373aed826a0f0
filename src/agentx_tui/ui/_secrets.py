"""Last line of defence: remove API keys from anything the UI writes or shows."""

from __future__ import annotations

import html
from collections.abc import Sequence

MASK = "********"


def scrub(text: str, secrets: Sequence[str]) -> str:
    """Replace every secret, raw and as it appears HTML-escaped in an SVG, with a mask."""
    for secret in secrets:
        if len(secret) < 4:
            # Masking a very short string would shred ordinary text; such a key is no secret anyway.
            continue
        for form in {secret, html.escape(secret), html.escape(secret, quote=False)}:
            text = text.replace(form, MASK)
    return text
