"""⁶ Cost: the tokens-per-dollar meter (docs/metrics.md), against the AgentX reference figure."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Digits

from agentx_tui.snapshot import Snapshot
from agentx_tui.ui._format import NA, money, split_compact
from agentx_tui.ui.panes._base import FigureLines, Pane, flow, label, line, value

# SemiAnalysis AgentX as reported for vLLM (docs/sweeps.md): the figure users come to compare against.
AGENTX_REFERENCE = "1.3 B tokens/$ (SemiAnalysis AgentX, vLLM)"


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
            figures.show(
                Content("\n").join(
                    [
                        Content.styled(cost.price_source, "$text-warning"),
                        line(label("or press "), value("c"), label(" to enter USD per GPU-hour and GPUs")),
                        line(label("reference "), AGENTX_REFERENCE),
                    ]
                )
            )
            return
        gpus = NA if cost.gpus is None else str(cost.gpus)
        spending = [
            line(label("per 1M output "), value(money(cost.usd_per_million_output_tokens))),
            line(label("spent "), value(money(cost.usd_spent))),
        ]
        figures.show(
            Content("\n").join(
                [
                    flow(spending, figures.size.width),
                    line(
                        label("price "),
                        value(f"${cost.usd_per_gpu_hour:.2f}/GPU-h × {gpus}"),
                        label(f" {cost.mode}"),
                    ),
                    # Without a GPU count the source says that every $ figure is n/a: in the warning's colour.
                    line(label("from "), Content.styled(cost.price_source, "" if cost.gpus else "$text-warning")),
                    line(label("reference "), AGENTX_REFERENCE),
                ]
            )
        )

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
