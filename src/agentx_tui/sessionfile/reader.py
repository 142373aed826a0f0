"""Session files read: bytes, a file or a corpus's files → validated `SessionFile`s in the reference
format (`variants.py`), or one `WorkloadError` (exit 2): one sentence naming the file (and its line,
in a `.jsonl` corpus), the request and the field.

Where sessions are: a `*.json` file is one session, a `*.jsonl` file one session a line (the layout of
the published corpora on Hugging Face); a folder's are its `*.json` and `*.jsonl` files, in path
order, its subfolders' (hidden ones aside) only when it has none at the top (a pulled corpus keeps its
files where the publisher put them).

pydantic-core parses and validates each session straight from its bytes; a file only meets Python
again where the schema's rules across fields and the variants walk its calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError

from agentx_tui.errors import WorkloadError
from agentx_tui.sessionfile.schema import RULE_ERROR, Call, SessionFile, SubAgent
from agentx_tui.sessionfile.variants import normalise

HINT = (
    "A session file is one JSON object with block_size and requests; each call needs t, in, out and "
    "hash_ids (think_time and api_time optional), each sub-agent t, duration_ms (or null) and requests."
)
SESSION_SUFFIXES = (".json", ".jsonl")

# How pydantic names the union's members in an error's location.
_READ_AS: dict[str, type[BaseModel]] = {"SubAgent": SubAgent, "Call": Call}
_JSON_AT = re.compile(r"^(?P<msg>.*) at line (?P<line>\d+) column (?P<column>\d+)$")


def session_file_paths(folder: Path) -> list[Path]:
    """The folder's session files; its subfolders' (hidden ones aside) only when it has none of its own."""
    files = sorted(p for p in folder.iterdir() if p.suffix in SESSION_SUFFIXES and p.is_file())
    if files:
        return files
    found = (
        p
        for p in folder.rglob("*")
        if p.suffix in SESSION_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        and p.is_file()
    )
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def read_sessions(path: Path) -> Iterator[tuple[int | None, SessionFile]]:
    """The sessions of one file: (None, it) for a `.json` file, (line number, each) for a `.jsonl` one."""
    if path.suffix != ".jsonl":
        yield None, read_session_file(path)
        return
    count = 0
    try:
        with path.open("rb") as lines:  # line by line: a published corpus is one file of 2 GB
            for number, line in enumerate(lines, 1):
                if line.strip():
                    count += 1
                    yield number, read_session_bytes(line, path, line=number)
    except OSError as exc:
        raise WorkloadError(f"Cannot read the session file {path} ({exc.strerror or exc}).") from exc
    if count == 0:
        raise WorkloadError(f"The session file {path} holds no sessions (one JSON object a line).", HINT)


def read_session_file(path: Path) -> SessionFile:
    """One `.json` session file."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise WorkloadError(f"Cannot read the session file {path} ({exc.strerror or exc}).") from exc
    return read_session_bytes(raw, path)


def read_session_bytes(raw: bytes, path: Path, *, line: int | None = None) -> SessionFile:
    """One session from its JSON bytes (`path` and `line` name it in messages)."""
    place = _Place(path, line)
    try:
        session = SessionFile.model_validate_json(raw, by_name=False)
    except ValidationError as exc:
        session = place.explain(raw, exc)
    return normalise(session, place.fail)


class _Place:
    def __init__(self, path: Path, line: int | None) -> None:
        self.path = path
        self.line = line

    def fail(self, where: str, problem: str) -> NoReturn:
        place = (
            f"Session file {self.path}" + (f", line {self.line}" if self.line else "") + (f", {where}" if where else "")
        )
        raise WorkloadError(f"{place}: {problem}.", HINT)

    def explain(self, raw: bytes, exc: ValidationError) -> SessionFile:
        """The session after all, when only its encoding was not UTF-8; else one sentence saying why not."""
        errors = exc.errors(include_url=False)
        if errors[0]["type"] != "json_invalid":
            self._explain_fields(errors)
        encoding = json.detect_encoding(raw)  # UTF-8 with a byte-order mark, UTF-16 or -32: as json.loads
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as bad:
            raise WorkloadError(f"The session file {self._named()} is not UTF-8 text ({bad.reason}).", HINT) from exc
        if encoding != "utf-8":
            return read_session_bytes(text.encode(), self.path, line=self.line)
        found = _JSON_AT.match(str(errors[0].get("ctx", {}).get("error", "")))
        if found is None:
            raise WorkloadError(f"The session file {self._named()} is not JSON ({errors[0]['msg']}).", HINT) from exc
        at = f"line {found['line']} column {found['column']}" if self.line is None else f"column {found['column']}"
        raise WorkloadError(f"The session file {self._named()} is not JSON ({found['msg']}, {at}).", HINT) from exc

    def _named(self) -> str:
        return str(self.path) if self.line is None else f"{self.path}, line {self.line},"

    def _explain_fields(self, errors: list[Any]) -> NoReturn:
        error = _first_as_read(errors)
        if error["type"] == RULE_ERROR:
            self.fail(error["ctx"]["where"], error["ctx"]["problem"])
        where, model, field = _where(error["loc"])
        value = error["input"]
        if not field:
            whole = "it must hold one JSON object" if not where else "it must be an object (a call or a sub-agent)"
            self.fail(where, f"{whole}, not {_kind(value)}")
        name = field[0]
        if name == "hash_ids" and len(field) > 1:
            self.fail(where, f"`hash_ids[{field[1]}]` must be an integer (64 bits at most), not {_show(value)}")
        rule = _rule(model, str(name))
        if error["type"] == "missing":
            self.fail(where, f"`{name}` is missing; it must be {rule}")
        self.fail(where, f"`{name}` must be {rule}, not {_show(value)}")


def _first_as_read(errors: list[Any]) -> Any:
    """The first error of the reading that applies: a request whose `type` is "subagent" is read as a
    sub-agent, any other as a call (pydantic reports the failures of both)."""
    sub_agents = {tuple(e["loc"][:-2]) for e in errors if e["type"] == "not_a_call"}

    def applies(loc: tuple[Any, ...]) -> bool:
        for k, part in enumerate(loc):
            if part in _READ_AS and part != ("SubAgent" if loc[:k] in sub_agents else "Call"):
                return False
        return True

    return next((e for e in errors if applies(tuple(e["loc"]))), errors[0])


def _where(loc: tuple[Any, ...]) -> tuple[str, type[BaseModel], tuple[Any, ...]]:
    """("requests", 1, "SubAgent", "requests", 0, "Call", "t") → ("requests[1].requests[0]", Call, ("t",))."""
    parts: list[str] = []
    model: type[BaseModel] = SessionFile
    k = 0
    while k + 2 < len(loc) and loc[k] == "requests" and loc[k + 2] in _READ_AS:
        parts.append(f"requests[{loc[k + 1]}]")
        model = _READ_AS[loc[k + 2]]
        k += 3
    return ".".join(parts), model, loc[k:]


def _rule(model: type[BaseModel], name: str) -> str:
    """What the field `name` (as a file spells it) must be: its description in the schema."""
    for python_name, field in model.model_fields.items():
        if (field.alias or python_name) == name and field.description:
            return field.description
    return "valid"


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}
    return kinds.get(type(value), "a number")
