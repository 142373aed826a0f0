"""`c`: edit the cost meter's price (USD per GPU-hour) and GPU count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.validation import Integer, Number
from textual.widgets import Input, Label, Static


@dataclass(frozen=True)
class PriceEdit:
    usd_per_gpu_hour: float | None
    gpus: int | None


class CostScreen(ModalScreen[PriceEdit | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, usd_per_gpu_hour: float | None, gpus: int | None) -> None:
        super().__init__(id="cost-dialog")
        self.initial_price = usd_per_gpu_hour
        self.initial_gpus = gpus

    def compose(self) -> ComposeResult:
        with Vertical(id="cost-body") as body:
            body.border_title = "cost"
            body.border_subtitle = "enter saves · esc cancels"
            yield Label("USD per GPU-hour")
            yield Input(
                "" if self.initial_price is None else f"{self.initial_price:g}",
                placeholder="e.g. 2.90",
                validators=[Number(minimum=0.0)],
                id="price-input",
            )
            yield Label("GPUs")
            yield Input(
                "" if self.initial_gpus is None else str(self.initial_gpus),
                placeholder="e.g. 8",
                validators=[Integer(minimum=1)],
                id="gpus-input",
            )
            yield Static("", id="cost-error")

    @on(Input.Submitted)
    def submit(self, event: Input.Submitted) -> None:
        price = self.query_one("#price-input", Input)
        gpus = self.query_one("#gpus-input", Input)
        if event.input is price and not gpus.value.strip():
            gpus.focus()
            return
        problems = [
            f"{name}: {'; '.join(result.failure_descriptions)}"
            for name, field in (("price", price), ("GPUs", gpus))
            if field.value.strip() and (result := field.validate(field.value)) and not result.is_valid
        ]
        if problems:
            self.query_one("#cost-error", Static).update("\n".join(problems))
            return
        self.dismiss(
            PriceEdit(
                float(price.value) if price.value.strip() else None,
                int(gpus.value) if gpus.value.strip() else None,
            )
        )

    def action_cancel(self) -> None:
        self.dismiss(None)
