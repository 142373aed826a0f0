"""The throughput pane's "where the time went" lines (docs/metrics.md, "Where the time went"): the
North-Star-setting requests' time as one bar (`tail_split`, snapshot/split.py) with the first-token share
in words; where the pane is wide, its legend and the servers' request phases; and, when the server
speculates, the acceptance length with its per-position rates and the golden length. Pure: the lines
come from the Snapshot and a width, and the tests call them.

At 80×24 (35 columns) the bar is one line and the acceptance length one more; nothing is said about
speculation when the server does not speculate (it exports no draft length).
"""

from __future__ import annotations

from typing import Literal

from textual.content import Content

from agentx_tui.snapshot import EndpointReading, Figures, Snapshot, TailSplit, tail_split, ttft_outside_server
from agentx_tui.snapshot.unknown import client_unknown, spec_unknown
from agentx_tui.ui._format import cells, count, percent, seconds
from agentx_tui.ui.panes._base import flow, label, line, value

WIDE = 56  # from this many columns: longer words
DETAIL = 80  # …and from this many (or maximised), the bar's legend and the servers' phases, a line each
LABEL, LABEL_WIDE = 4, 9  # "p90 " / "p90 time " and "spec " / "spec     "
MIN_BAR = 8
# The bar's segments, left to right: what a request meets first comes first; the first token is one
# segment where the servers' phases do not cut it.
Segment = Literal["outside", "queue", "prefill", "first token", "decode", "stalls"]
# Each segment's glyph (the bar reads without colour too), theme colour and words.
GLYPHS: dict[Segment, tuple[str, str, str]] = {
    "outside": ("░", "$secondary", "outside"),  # the server: the network, its frontend, the client
    "queue": ("▒", "$warning", "queue"),
    "prefill": ("▓", "$success", "prefill"),
    "first token": ("▓", "$accent", "first token"),
    "decode": ("█", "$primary", "decode"),
    "stalls": ("▚", "$error", "stalls"),
}
# AgentX pins an agentic run's acceptance length to the golden one within 2% (docs/sweeps.md).
GOLDEN_TOLERANCE = 0.02
_LEVELS = "▁▂▃▄▅▆▇█"


def bar_legend() -> str:
    """The bar's glyphs in words, for the help: the first-token part's three, decode and stalls."""
    shown: tuple[Segment, ...] = ("outside", "queue", "prefill", "decode", "stalls")
    return " ".join(f"{GLYPHS[name][0]} {GLYPHS[name][2]}" for name in shown)


# What the bar is, in words, where a maximised pane has the room (docs/metrics.md, "Where the time went").
RULE = (
    "p90 time: r_i (E2E ÷ output tokens) of the requests at or above its p90, by the client's clock; the"
    " first token split by the server's queue and prefill means and the rest (outside the server)"
)


def time_lines(snap: Snapshot, width: int, *, detail: bool = False, rule: bool = False) -> list[Content]:
    """The bar's line, then the speculative decoding line when the server speculates; with `detail` (a
    pane `DETAIL` columns wide, or maximised) the bar's legend and the servers' phases under the bar, and
    with `rule` what the bar is, in words."""
    client, agg = snap.client, snap.aggregate
    window = client.window if client is not None else None
    bar = _bar_of(window, agg)
    detail = detail or width >= DETAIL
    lines = [_bar_line(bar, width, _why_no_bar(snap) if bar is None else "")]
    if detail and bar is not None:
        lines.append(_legend(bar, width))
    if detail and agg is not None:
        lines += _phases(agg, window, width)
    if rule:
        lines.append(_row("", [label(word) for word in RULE.split(" ")], width, " "))
    if agg is not None and agg.spec_draft_length is not None:
        lines += _spec(agg, width, detail)
    return lines


def _bar_of(window: Figures | None, agg: EndpointReading | None) -> TailSplit | None:
    """The window's tail as one bar: the client's split, its first token cut by the servers' means."""
    if window is None:
        return None
    queue = agg.server_queue_s_mean if agg is not None else None
    prefill = agg.server_prefill_s_mean if agg is not None else None
    return tail_split(
        window.north_star_ttft_share,
        window.north_star_stall_share,
        queue_s=queue,
        prefill_s=prefill,
        outside_s=ttft_outside_server(window.ttft_s_mean, queue, prefill),
    )


def segments(split: TailSplit) -> list[tuple[Segment, float]]:
    """The bar's segments in order, each with its share of the tail's r_i."""
    first: list[tuple[Segment, float | None]] = (
        [("outside", split.outside), ("queue", split.queue), ("prefill", split.prefill)]
        if split.phased
        else [("first token", split.first_token)]
    )
    parts = [(name, share or 0.0) for name, share in first]
    parts.append(("decode", split.decode))
    if split.stalls is not None:
        parts.append(("stalls", split.stalls))
    return parts


def _why_no_bar(snap: Snapshot) -> str:
    """Why the window has no split: no load of its own, nothing completed, or nothing in the window."""
    client = snap.client
    completed = client.totals.requests_completed if client is not None else None
    if client is None or not completed:
        return client_unknown(client is not None, completed)
    return "none in the window: no streamed request"


def _bar_line(bar: TailSplit | None, width: int, why: str) -> Content:
    head = label(("p90 time" if width >= WIDE else "p90").ljust(LABEL_WIDE if width >= WIDE else LABEL))
    if bar is None:
        room = width - head.cell_length
        said = why if len(why) + 5 <= room else why.split(": ")[0]  # the reason's first clause, if need be
        return line(head, Content.styled(f"n/a: {said}", "$text-muted"))
    first = percent(bar.first_token, 0)
    stalls = percent(bar.stalls, 0) if bar.stalls is not None else None
    for words in _share_words(first, stalls, width >= WIDE):
        size = width - head.cell_length - 1 - words.cell_length
        if size >= MIN_BAR:
            return line(head, _cells(bar, size), " ", words)
    return line(head, _cells(bar, max(width - head.cell_length, MIN_BAR)))


def _share_words(first: str, stalls: str | None, wide: bool) -> list[Content]:
    """The first-token share (and the stall share) beside the bar, longest words first."""
    forms = [("first token ", " · stalls "), ("TTFT ", " stall ")] if wide else [("TTFT ", " stall ")]
    out = []
    for first_words, stall_words in forms:
        parts = [label(first_words), value(first, "bold $accent")]
        if stalls is not None:
            parts += [label(stall_words), value(stalls)]
        out.append(line(*parts))
    out.append(line(label("TTFT "), value(first, "bold $accent")))
    return out


def _cells(bar: TailSplit, size: int) -> Content:
    parts = segments(bar)
    widths = cells([share for _, share in parts], size)
    return Content.assemble(
        *(Content.styled(GLYPHS[name][0] * n, GLYPHS[name][1]) for (name, _), n in zip(parts, widths, strict=True) if n)
    )


def _legend(bar: TailSplit, width: int) -> Content:
    """Under the bar: each segment's glyph, words and share of the tail's r_i."""
    parts = [
        line(Content.styled(GLYPHS[name][0], GLYPHS[name][1]), label(f" {GLYPHS[name][2]} "), value(percent(share, 0)))
        for name, share in segments(bar)
    ]
    return _row("", parts, width)


def _phases(agg: EndpointReading, window: Figures | None, width: int) -> list[Content]:
    """The servers' request phases over the window (means per finished request), the wait outside the
    server, tokens per engine step: none where the server exports none of them."""
    queue, prefill, decode = agg.server_queue_s_mean, agg.server_prefill_s_mean, agg.server_decode_s_mean
    if queue is None and prefill is None and decode is None and agg.server_step_tokens_mean is None:
        return []
    outside = ttft_outside_server(window.ttft_s_mean if window is not None else None, queue, prefill)
    parts = [
        line(label("queue "), value(seconds(queue))),
        line(label("prefill "), value(seconds(prefill))),
        line(label("decode "), value(seconds(decode))),
    ]
    if outside is not None:
        parts.append(line(label("outside "), value(seconds(max(outside, 0.0)))))
    if agg.server_step_tokens_mean is not None:
        parts.append(line(value(count(agg.server_step_tokens_mean)), label(" tok/step")))
    return [_row("server", parts, width)]


def _spec(agg: EndpointReading, width: int, detail: bool) -> list[Content]:
    """Speculative decoding over the window: the acceptance length, its per-position rates, the golden
    length (the length in the warning colour when off it by more than AgentX's 2%); one line, or with
    `detail` the acceptance rate, k and where the golden length came from too."""
    head = label("spec".ljust(LABEL_WIDE if width >= WIDE else LABEL + 1))
    al, k = agg.spec_acceptance_length, agg.spec_draft_length
    if al is None:  # the report's reason where it fits, else its gist
        why = spec_unknown(k, agg.spec_golden_source)
        room = width - head.cell_length - len(f"k {k}: n/a: ")
        said = why if len(why) <= room else "no draft in the window"
        return [line(head, Content.styled(f"k {k}: n/a: {said}", "$text-muted"))]
    ratio = agg.spec_acceptance_vs_golden
    off = ratio is not None and abs(ratio - 1) > GOLDEN_TOLERANCE
    length = line(label("AL "), value(f"{al:.2f}", "bold $warning" if off else "bold $accent"))
    positions = agg.spec_acceptance_by_position or ()
    numbers = label(" ".join(f"{rate:.2f}" for rate in positions))
    levels = label("".join(_LEVELS[min(int(rate * len(_LEVELS)), len(_LEVELS) - 1)] for rate in positions))
    golden = agg.spec_golden_acceptance_length
    if detail:
        parts = [
            line(length, label(f" tok/step, k {k}")),
            line(label("accepted "), value(percent(agg.spec_acceptance_rate, 0))),
            line(label("by position "), numbers),
        ]
        golden_words = _golden_words(golden, ratio, off, agg.spec_golden_source, k)
        return [_row("spec", parts, width, " · "), _row("", golden_words, width, " ")]
    room = width - head.cell_length
    forms: list[list[Content]] = []
    if golden is not None:
        pinned = line(label("golden "), value(f"{golden:.2f}"))
        forms += [[length, numbers, pinned], [length, pinned, levels], [length, pinned]]
    forms += [[length, numbers], [length, levels], [length]]
    for parts in forms:
        joined = Content(" · ").join(parts)
        if joined.cell_length <= room:
            return [line(head, joined)]
    return [line(head, length)]


def _golden_words(
    golden: float | None, ratio: float | None, off: bool, source: str | None, k: int | None
) -> list[Content]:
    """The golden length, measured ÷ golden, and where the golden came from (or why there is none), in
    parts a line breaks between."""
    if golden is None:
        return [label("golden n/a:"), *(label(word) for word in spec_unknown(k, source, golden=True).split(" "))]
    measured = value(f"×{ratio:.2f}", "bold $warning" if off else "bold") if ratio is not None else value("×n/a")
    said = line(label("golden "), value(f"{golden:.2f}"), label(", measured "), measured)
    return [said, *(label(word) for word in f"({source})".split(" "))] if source else [said]


def _row(head: str, parts: list[Content], width: int, gap: str = "  ") -> Content:
    """A row of a wide pane: the parts after the label while they fit, then on further lines under the
    first part (`flow`: a figure never wraps away from its label)."""
    body = flow(parts, max(width - LABEL_WIDE, 10), gap)
    return line(label(head.ljust(LABEL_WIDE)), Content("\n" + " " * LABEL_WIDE).join(body.split("\n")))
