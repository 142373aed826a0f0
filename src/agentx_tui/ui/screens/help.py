"""`?`: every key the dashboard answers to right now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss", "close"),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__(id="help")
        self.keys = keys

    def compose(self) -> ComposeResult:
        width = max(len(key) for key, _ in self.keys) + 2
        rows = [Content.assemble(Content.styled(key.ljust(width), "bold $accent"), text) for key, text in self.keys]
        with VerticalScroll(id="help-body") as body:
            body.border_title = "keys"
            body.border_subtitle = "esc closes"
            yield Static(Content("\n").join(rows), id="help-text")
