"""The AgentX session file as pydantic models: the one place where its field names are spelled.

The format is the one of the AgentX corpus (kv-cache-tester's traces, the 40 files in
`../shared/traces/agentx-weka/`; workloads/README.md has the replay rules, docs/sessions.md the
published variants, docs/capture.md what the capture writes). One JSON object a file (or a line of a
`.jsonl` corpus): `block_size`, `hash_id_scope` and `requests` in time order, each a **call** or a
**sub-agent** (`type: "subagent"`) holding requests of its own.

The models are what the replay reads (`reader.py`) and what the capture writes (`writer.py`), so a
captured file is by construction one the replay accepts. Reading is as tolerant as the format has
always been read:
- fields nobody replays (`model`, `stop`, `totals`, ...) take any value: one of another type reads as
  unknown (None), an unknown field is ignored;
- a call is any request whose `type` is not `"subagent"` (`n`, `s`, `?`, none at all);
- token counts are JSON numbers with no fraction (`200.0` reads as 200), never text or a boolean;
  times are finite, non-negative numbers; `think_time`, `api_time` and `duration_ms` may be null;
- `hash_ids` are integers, or strings: the variants step (`variants.py`) renumbers strings and
  integers past 64 bits, as no replay needs more than equality within one file.
Rules across fields (no more hash ids than `in` has blocks, at least one call) are checked here too,
and a field's `description` is what the reader's message says it must be. Writing leaves out what a
file leaves out when unknown (`ttft`, the corpus's own fields) and writes null where null says
"unknown" (`cached`, `duration_ms`, `tokenizer`, `totals.cached_tokens`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainSerializer,
    Strict,
    StrictInt,
    StrictStr,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

# What a field must be, as the reader's messages say it ("`t` must be a non-negative number, not -1").
_SECONDS = "a non-negative number"

# A problem the models find across fields: its `where` (e.g. "requests[3]") and `problem` in the context.
RULE_ERROR = "session_file_rule"


class _Lenient:
    """A field the replay does not read: a value of another type reads as None, as such fields always
    were (a reader ignored them)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        checked = handler(source)
        unknown = core_schema.no_info_plain_validator_function(lambda _: None)
        return core_schema.union_schema(
            [checked, unknown], mode="left_to_right", serialization=checked.get("serialization")
        )


def _no_text_or_boolean(value: Any) -> Any:
    # pydantic's int takes "200" and true; a count in a session file is a number, as it always was.
    if isinstance(value, str | bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def _integral_as_int(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def _omitted(value: Any) -> bool:
    return value is None


_T = TypeVar("_T")
# A field the replay does not read: any value of another type reads as None; written as null.
Lenient = Annotated[_T | None, _Lenient()]
# The same, left out of a written file when None (as the corpus and the capture leave it out).
Extra = Annotated[_T | None, _Lenient(), Field(exclude_if=_omitted)]
# A field the replay reads that a file may leave out: left out when None.
Omittable = Annotated[_T | None, Field(exclude_if=_omitted)]

# Seconds (or milliseconds): a finite, non-negative JSON number (an integer is one too).
Seconds = Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)]
# A count of tokens: a JSON number without a fraction.
Count = Annotated[int, BeforeValidator(_no_text_or_boolean)]
# Written as an integer when it is one (the capture writes whole milliseconds).
Milliseconds = Annotated[Seconds, PlainSerializer(_integral_as_int, when_used="json")]
HashId = StrictInt | StrictStr


def _not_a_sub_agent(value: str | None) -> str | None:
    if value == "subagent":  # read as a sub-agent, or refused as one: never as a call
        raise PydanticCustomError("not_a_call", "a sub-agent is not a call")
    return value


class _Model(BaseModel):
    # Python names where JSON's are keywords (`in`, `out`); files are read by the JSON names only
    # (`reader.py` passes by_name=False) and always written by them.
    model_config = ConfigDict(
        frozen=True, extra="ignore", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )


class Call(_Model):
    """One model call of an agent."""

    t: Annotated[Seconds, Field(description=_SECONDS)]  # start, from the start of its agent (a sub-agent's: its spawn)
    type: Annotated[Extra[str], AfterValidator(_not_a_sub_agent)] = None  # `s` streamed, `n` not (or `?`, none)
    model: Extra[str] = None
    input_tokens: Annotated[Count, Field(alias="in", ge=1, description="a positive integer (prompt tokens)")]
    output_tokens: Annotated[Count, Field(alias="out", ge=0, description="a non-negative integer (output tokens)")]
    cached: Lenient[int] = None  # the server's cached prompt tokens; null: unknown
    # One id per whole block of the prompt (a partial last block may have one); equal ids, equal blocks.
    hash_ids: Annotated[list[HashId], Field(description="a list of integers (one per block)")]
    input_types: Extra[list[str]] = None
    output_types: Extra[list[str]] = None
    stop: Extra[str] = None
    api_time: Annotated[Omittable[Seconds], Field(description=_SECONDS)] = None  # seconds the server took
    think_time: Annotated[Omittable[Seconds], Field(description=_SECONDS)] = None  # waited after the previous call
    counts_from: Extra[str] = None
    ttft: Extra[float] = None


class SubAgent(_Model):
    """A sub-agent: its own requests, on its own clock (from its spawn)."""

    type: Literal["subagent"] = "subagent"
    t: Annotated[Seconds, Field(description=_SECONDS)]  # its result came back to the parent (its end), on its clock
    agent_id: Extra[str] = None
    subagent_type: Extra[str] = None
    duration_ms: Annotated[Milliseconds | None, Field(description=_SECONDS)] = None  # null: its span is unknown
    status: Extra[str] = None
    models: Extra[list[str]] = None
    total_tokens: Extra[int] = None
    tool_use_count: Extra[int] = None
    tool_tokens: Extra[int] = None
    system_tokens: Extra[int] = None
    requests: Annotated[list[Request], Field(description="a list of the sub-agent's calls")]


# A request is a sub-agent when its `type` says so, else a call. Tried in this order, so that an error's
# location names the model it was read as (`requests[1].SubAgent.t`); `reader.py` keeps the right one.
Request = Annotated[SubAgent | Call, Field(union_mode="left_to_right")]


class TokenCounts(_Model):
    input: Lenient[int] = None
    output: Lenient[int] = None


class Totals(_Model):
    """The file's own sums (kv-cache-tester's, and the capture's own figures); the replay reads none."""

    parent_tokens: Extra[TokenCounts] = None
    subagent_tokens: Extra[TokenCounts] = None
    combined_tokens: Extra[TokenCounts] = None
    cached_tokens: Lenient[int] = None  # null: some call's is unknown
    subagent_count: Extra[int] = None
    calls: Extra[int] = None
    calls_counted_without_usage: Extra[int] = None
    calls_without_hash_ids: Extra[int] = None
    failed_calls_left_out: Extra[int] = None


class SessionFile(_Model):
    """One session tree: an agent's requests and its sub-agents'."""

    id: Extra[str] = None  # none: the replay names the session after its file
    captured_by: Extra[str] = None  # "agentx-tui <version> proxy"
    tokenizer: Lenient[str] = None  # the capture's: the served model's name
    models: Extra[list[str]] = None
    block_size: Annotated[Count, Field(ge=1, description="a positive integer (tokens per hash id)")]
    # "local" (none: local): ids compared within the file only; `variants.py` refuses any other.
    hash_id_scope: Annotated[Omittable[str], Field(description='"local" (hash ids compared within one file)')] = None
    tool_tokens: Extra[int] = None
    system_tokens: Extra[int] = None
    requests: Annotated[list[Request], Field(description="a list of calls and sub-agents")]
    totals: Extra[Totals] = None

    @model_validator(mode="after")
    def _rules_across_fields(self) -> SessionFile:
        if _count_calls(self.requests, self.block_size) == 0:
            raise _rule("", "`requests` holds no calls")
        return self


def _count_calls(requests: list[SubAgent | Call], block_size: int, prefix: str = "") -> int:
    """The calls of `requests` and of their sub-agents; a rule's error at the first with too many hash ids."""
    count = 0
    for i, item in enumerate(requests):
        if isinstance(item, SubAgent):
            count += _count_calls(item.requests, block_size, f"{prefix}requests[{i}].")
        elif len(item.hash_ids) > -(-item.input_tokens // block_size):
            raise _rule(
                f"{prefix}requests[{i}]",
                f"`hash_ids` has {len(item.hash_ids)} ids, more than `in` ({item.input_tokens} tokens) allows "
                f"in blocks of {block_size}",
            )
        else:
            count += 1
    return count


def _rule(where: str, problem: str) -> PydanticCustomError:
    return PydanticCustomError(RULE_ERROR, "{where}: {problem}", {"where": where, "problem": problem})


SubAgent.model_rebuild()
