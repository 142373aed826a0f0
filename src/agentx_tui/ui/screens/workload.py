"""`w`: switch the workload live: running sessions finish their request, then users start the new one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class WorkloadScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel")]

    def __init__(self, presets: Sequence[tuple[str, str]], current: str) -> None:
        super().__init__(id="workload-dialog")
        self.presets = list(presets)
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="workload-body") as body:
            body.border_title = "workload"
            body.border_subtitle = "enter switches · esc cancels"
            options = [
                Option(f"{'● ' if name == self.current else '  '}{name:<14} {description}", id=name)
                for name, description in self.presets
            ]
            yield OptionList(*options, id="workload-options")

    def on_mount(self) -> None:
        names = [name for name, _ in self.presets]
        options = self.query_one(OptionList)
        options.highlighted = names.index(self.current) if self.current in names else 0
        options.focus()

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
