"""The widget half of a chart drawn with Textual's line API (panes/frontier.py, panes/tasks.py).

A pane's chart is a pure function from its data to rows of (text, role) runs; `RunChart` turns those
runs into strips, styling each run by its role (a component class `<prefix>--<role>`, so the theme and
CSS colour them), and redraws only when the data or the size changed. A chart names its roles once
(`ROLES`); their component classes follow from them.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

Run = tuple[str, str]  # (text, role): role "" is the widget's own style
Data = TypeVar("Data")


class RunChart(Widget, Generic[Data]):
    """A chart of `data` that `draw` turns into rows of runs; a run's role is styled by the component
    class `ROLE_PREFIX` + role, one for each of `ROLES`."""

    ROLE_PREFIX: ClassVar[str]
    ROLES: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Textual reads a widget's component classes from its class's own COMPONENT_CLASSES.
        cls.COMPONENT_CLASSES = {cls.ROLE_PREFIX + role for role in cls.ROLES}

    def __init__(self, data: Data, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = data
        self._styles: dict[str, Style] = {}
        self._drawn: tuple[Data, tuple[int, int], list[Strip]] | None = None

    @abstractmethod
    def draw(self, data: Data, width: int, height: int) -> list[list[Run]]:
        """The chart as `height` rows of runs, each `width` cells wide."""

    def plot(self, data: Data) -> None:
        if data != self.data:
            self.data = data
            self.refresh()

    def notify_style_update(self) -> None:
        # A theme or CSS change: resolve the colours again and redraw.
        super().notify_style_update()
        self._styles = {}
        self._drawn = None

    def _style(self, role: str) -> Style:
        if not self._styles:
            base = self.rich_style
            self._styles = {"": base}
            for each in self.ROLES:
                self._styles[each] = base + self.get_component_rich_style(self.ROLE_PREFIX + each)
        return self._styles.get(role, self._styles[""])

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        drawn = self._drawn
        if drawn is None or drawn[0] is not self.data or drawn[1] != (width, height):
            strips = [
                Strip([Segment(text, self._style(role)) for text, role in runs]).crop_extend(0, width, self.rich_style)
                for runs in self.draw(self.data, width, height)
            ]
            drawn = self._drawn = (self.data, (width, height), strips)
        strips = drawn[2]
        return strips[y] if 0 <= y < len(strips) else Strip.blank(width, self.rich_style)
