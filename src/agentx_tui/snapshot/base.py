"""The base of every model in a Snapshot: immutable, and refusing a field it does not declare (a
misspelt name is an error, never a silently dropped value)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
