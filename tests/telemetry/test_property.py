"""No metrics text, however malformed, makes the scraper raise."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentx_tui.telemetry import MetricsReader

from .pages import REAL_AFTER, old_vllm, sglang

_REAL_LINES = REAL_AFTER.read_text().splitlines()[:200]
_FRAGMENTS = [
    *_REAL_LINES,
    *old_vllm(queries=1, hits=1, prompt=1, gen=1, itl=(1, 1, 1)).splitlines(),
    *sglang(prompt=1, gen=1, cached=1).splitlines(),
    'vllm:kv_cache_usage_perc{engine="x"} NaN',
    'vllm:time_to_first_token_seconds_bucket{le="abc"} 3',
    'vllm:time_to_first_token_seconds_bucket{le="+Inf"} -5',
    'vllm:cache_config_info{block_size="0"} 1',
    'vllm:prompt_tokens_total{engine="²"} 1e308',
    "# TYPE vllm:prompt_tokens histogram",
    "# EOF",
    "",
]

lines = st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=80))


@settings(max_examples=300, deadline=None)
@example(pages=["{", " {", "\t", "{x} 1", "# TYPE", "#"])  # a line with no name once raised
@given(pages=st.lists(st.lists(lines, max_size=25).map("\n".join), min_size=1, max_size=4))
def test_any_text_gives_figures_or_a_status(pages: list[str]) -> None:
    reader = MetricsReader("http://fuzz")
    for tick, text in enumerate(pages):
        figs = reader.read(text, float(tick))
        assert figs.status == "up" or figs.status.startswith("no metrics:")
