"""The golden acceptance length each endpoint's speculative decoding is measured against (docs/metrics.md,
"Where the time went"; docs/sweeps.md, "AgentX validity"): `--spec-golden` for any model, else the
golden table's row for its served model at its draft length, found once per (model, draft length)."""

from __future__ import annotations

from agentx_tui.cost import GoldenLength, GoldenTable, golden_length, load_golden
from agentx_tui.snapshot import EndpointReading, acceptance_vs_golden


class GoldenLengths:
    def __init__(self, override: float | None, table: GoldenTable | None = None) -> None:
        self._override = override
        self._table = table or load_golden()  # read (and checked) once: preflight said a bad file already
        self._found: dict[tuple[str | None, int | None], GoldenLength] = {}

    def of(self, e: EndpointReading) -> EndpointReading:
        """`e` with the golden acceptance length of its model at its draft length, where it came from (or
        why there is none), and its measured acceptance length's ratio to it."""
        key = (e.model, e.spec_draft_length)
        golden = self._found.get(key)
        if golden is None:
            golden = self._found[key] = golden_length(*key, override=self._override, table=self._table)
        return e.model_copy(
            update={
                "spec_golden_acceptance_length": golden.length,
                "spec_golden_source": golden.source,
                "spec_acceptance_vs_golden": acceptance_vs_golden(e.spec_acceptance_length, golden.length),
            }
        )
