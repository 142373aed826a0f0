"""Run agentx-tui in this process and keep every sweep point's raw interval sample (for the CI studies).

    .venv/bin/python bench/_point_samples.py OUT.json -- AGENTX-TUI ARGS...

Each point's final figures and the sample its intervals are computed from (sweep/intervals.py's
`Sample`) are written to OUT.json as a list, one entry per point, so that a study can compute every
interval method offline from the same runs. Nothing of agentx-tui changes but this wrapper around
`PointWindow.figures`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentx_tui import cli
from agentx_tui.snapshot import PointFigures
from agentx_tui.sweep import points as points_module
from agentx_tui.sweep.intervals import Sample

_kept: dict[int, dict[str, Any]] = {}


def sample_to_json(sample: Sample) -> dict[str, Any]:
    data = asdict(sample)
    data["tree_itl"] = [{str(k): v for k, v in t.items()} for t in sample.tree_itl]
    data["slot_itl"] = [{str(k): v for k, v in t.items()} for t in sample.slot_itl]
    data["tree_e2e"] = [{str(k): v for k, v in t.items()} for t in sample.tree_e2e]
    data["slot_e2e"] = [{str(k): v for k, v in t.items()} for t in sample.slot_e2e]
    return data


def sample_from_json(data: dict[str, Any]) -> Sample:
    return Sample(
        duration_s=data["duration_s"],
        tree_tokens=tuple(data["tree_tokens"]),
        tree_itl=tuple({int(k): v for k, v in t.items()} for t in data["tree_itl"]),
        slot_s=data["slot_s"],
        slot_tokens=tuple(data["slot_tokens"]),
        slot_itl=tuple({int(k): v for k, v in t.items()} for t in data["slot_itl"]),
        requests=data["requests"],
        user_tokens=tuple(data.get("user_tokens", ())),
        user_cohorts=tuple(data.get("user_cohorts", ())),
        tree_e2e=tuple({int(k): v for k, v in t.items()} for t in data.get("tree_e2e", ())),
        slot_e2e=tuple({int(k): v for k, v in t.items()} for t in data.get("slot_e2e", ())),
    )


def main() -> int:
    out = Path(sys.argv[1])
    args = sys.argv[sys.argv.index("--") + 1 :]
    original = points_module.PointWindow.figures

    def figures(self: points_module.PointWindow) -> PointFigures:
        point = original(self)
        sample = points_module.interval_sample(self.client, point.duration_s)
        _kept[self.index] = {"figures": point.model_dump(), "sample": sample_to_json(sample)}
        return point

    points_module.PointWindow.figures = figures  # type: ignore[method-assign]
    code = cli.main(args)
    out.write_text(json.dumps([_kept[i] for i in sorted(_kept)]))
    return code


if __name__ == "__main__":
    sys.exit(main())
