"""⁶ Cost: the tokens-per-dollar meter (docs/metrics.md), against the AgentX reference figure."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Digits

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui._format import NA, money, split_compact
from agentx_tui.ui.panes._base import FigureLines, Pane, flow, label, line, pack, value

# SemiAnalysis AgentX as reported for vLLM (docs/sweeps.md): the figure users come to compare against.
AGENTX_REFERENCE = "1.3 B tokens/$"
# …and the operating point it came from: a high-concurrency point of a frontier, not a typical run's (830 K
# tok/s per GPU at 2.30 USD per GPU-hour is 1.3 B tokens per dollar). Its words, longest first, in parts a
# line breaks between: the pane shows the longest that fits the rows its other lines leave.
AGENTX_REFERENCE_POINT: tuple[tuple[str, ...], ...] = (
    (
        "(SemiAnalysis AgentX, vLLM:",
        "830 K tok/s per GPU",
        "at 100 tok/s/user,",
        "a high-concurrency",
        "frontier point,",
        "~$2.30/GPU-h)",
    ),
    ("(AgentX, vLLM:", "830 K tok/s/GPU", "at 100 tok/s/user,", "~$2.30/GPU-h)"),
    ("(AgentX, vLLM at", "100 tok/s/user)"),
)
_REFERENCE_ROWS = 2


class CostPane(Pane):
    KEY = 6
    TITLE = "Cost"

    def compose(self) -> ComposeResult:
        with Horizontal(classes="meter"):
            yield Digits("", id="cost-total-digits")
            yield FigureLines(id="cost-total-unit", classes="meter-unit")
        with Horizontal(classes="meter", id="cost-output-meter"):
            yield Digits("", id="cost-output-digits")
            yield FigureLines(id="cost-output-unit", classes="meter-unit")
        yield FigureLines(id="cost-figures")

    def show(self, snap: Snapshot) -> None:
        cost = snap.cost
        self._meter("total", cost.tokens_per_dollar_total, "all tokens")
        self._meter("output", cost.tokens_per_dollar_output, "output")
        figures = self.query_one("#cost-figures", FigureLines)
        # Without a price the large meters would only say n/a twice: the pane shows how to set one.
        self.set_class(cost.usd_per_gpu_hour is None, "-no-price")
        if cost.usd_per_gpu_hour is None:
            lines = [
                Content.styled(cost.price_source, "$text-warning"),
                line(label("or press "), value("c"), label(" to enter USD per GPU-hour and GPUs")),
            ]
            figures.show(Content("\n").join([*lines, self._reference(lines)]))
            return
        gpus = NA if cost.gpus is None else str(cost.gpus)
        width = figures.size.width
        spent = line(label("spent "), value(money(cost.usd_spent)))
        for words in ("per 1M output ", "per 1M out "):  # one line where the shorter words make it fit
            spending = [line(label(words), value(money(cost.usd_per_million_output_tokens))), spent]
            if len(pack(spending, width, 2)) == 1:
                break
        lines = [
            flow(spending, width),
            line(
                label("price "),
                value(f"${cost.usd_per_gpu_hour:.2f}/GPU-h × {gpus}"),
                label(f" {cost.mode}"),
            ),
            # Without a GPU count the source says that every $ figure is n/a: in the warning's colour.
            line(label("from "), Content.styled(cost.price_source, "" if cost.gpus else "$text-warning")),
        ]
        figures.show(Content("\n").join([*lines, self._reference(lines)]))

    def _reference(self, above: list[Content]) -> Content:
        """The AgentX reference with the operating point it came from, in the longest words that fit the
        rows the meters and the lines `above` leave in the pane (the shortest where none does)."""
        width = max(self.query_one("#cost-figures", FigureLines).size.width, 20)
        meters = sum(meter.outer_size.height for meter in self.query(".meter") if meter.display)
        used = sum(_rows(text, width) for text in above)
        # Two lines at most: where the row's height follows its panes' content (the full layout), a longer
        # reference would make the row taller, and leave itself more rows.
        rows = min(max(self.content_size.height - meters - used, 1), _REFERENCE_ROWS)
        head = line(label("reference "), value(AGENTX_REFERENCE))
        for words in AGENTX_REFERENCE_POINT:
            reference = flow([head, *(label(part) for part in words)], width, " ")
            if _rows(reference, width) <= rows:
                return reference
        return reference

    def _meter(self, which: str, tokens_per_dollar: float | None, what: str) -> None:
        number, unit = split_compact(tokens_per_dollar)
        digits = self.query_one(f"#cost-{which}-digits", Digits)
        shown = "" if number == NA else number
        if digits.value != shown:
            digits.update(shown)
        unit_text = f"{unit} tokens/$" if unit else "tokens/$"
        self.query_one(f"#cost-{which}-unit", FigureLines).show(
            Content.assemble(value(unit_text) if number != NA else value(f"{NA} tokens/$"), "\n", label(what))
        )


def _rows(text: Content, width: int) -> int:
    """The rows `text` takes in `width` columns, its lines wrapped."""
    return sum(max(1, -(-len(part) // width)) for part in text.plain.split("\n"))
