"""Token counts from an OpenAI `usage` object (an answer streamed to the load client, or relayed by
the proxy): what the server itself counted."""

from __future__ import annotations

from typing import Any


def usage_int(usage: object, key: str) -> int | None:
    """An integer of an OpenAI `usage` object (`prompt_tokens`, `completion_tokens`); None when absent."""
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_cached_tokens(usage: object) -> int | None:
    """`usage.prompt_tokens_details.cached_tokens` (vLLM fills it with prefix caching on); None when absent."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    return usage_int(details, "cached_tokens")


class UsageCounts:
    """Token counts read from the OpenAI `usage` object of whatever holds one as `usage` (an answer
    streamed to the load client, or relayed by the proxy)."""

    __slots__ = ()
    usage: dict[str, Any] | None

    @property
    def prompt_tokens(self) -> int | None:
        return usage_int(self.usage, "prompt_tokens")

    @property
    def output_tokens(self) -> int | None:
        return usage_int(self.usage, "completion_tokens")

    @property
    def cached_tokens(self) -> int | None:
        return usage_cached_tokens(self.usage)
