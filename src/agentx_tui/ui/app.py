"""The dashboard app: wires the source worker, the UI clock, the panes, the keys and the screens.

Data flows one way: the worker posts each Snapshot up as a message; the app keeps only the latest
(plus its own bounded histories) and, on its own clock, sets the `snapshot` reactive that every pane
is bound to. So the screen redraws at most once per `refresh_s`, whatever rate the source runs at.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.events import Resize
from textual.reactive import reactive
from textual.widgets import Footer, Static

from agentx_tui.control import LiveControls, ReplayControls, SnapshotSource
from agentx_tui.redaction import redact as scrub
from agentx_tui.snapshot import Snapshot
from agentx_tui.terminal import no_color
from agentx_tui.ui._history import History
from agentx_tui.ui._themes import BUNDLED_DIR, choose_theme, load_themes, user_theme_dir
from agentx_tui.ui.header import RunHeader
from agentx_tui.ui.messages import SnapshotArrived, SourceEnded
from agentx_tui.ui.panes import PANES, FrontierPane, LogPane, Pane, ThroughputPane, UsersPane
from agentx_tui.ui.panes._time import bar_legend
from agentx_tui.ui.screens import CostScreen, HelpScreen, PriceEdit, WorkloadScreen

MIN_SIZE = (80, 24)
# Below this the two-column compact layout is used (and scrolls); above it, the full grid.
WIDE_SIZE = (150, 40)
# From this height the compact layout fits every pane with rows to spare: the users table takes them.
ROOMY_HEIGHT = 48
MIN_REFRESH_S = 0.25  # the UI never draws more than 4 times a second

SWEEP_ONLY = {"frontier_x", "frontier_y"}
LIVE_ONLY = {"pause", "users_up", "users_down", "edit_cost", "reset", "switch_workload"}
REPLAY_ONLY = {"step_fwd", "step_back", "slower", "faster", "first", "last"}


def _release_job_control() -> None:
    """Take back SIGCONT and SIGTSTP from Textual's Linux driver once the app has exited.

    The driver installs handlers for them when it is created and never removes them. A terminal that
    closes after the app has exited but while the run is still winding down (`q`, then the SSH window
    closed while the server stops and the report is written) sends SIGHUP and SIGCONT; the driver's
    SIGCONT handler then restarts application mode: a new input thread that nobody stops, spinning on
    the dead terminal, keeps the process alive at most of a core after everything else has ended."""
    for name in ("SIGCONT", "SIGTSTP"):
        sig = getattr(signal, name, None)  # (neither exists on Windows)
        if sig is not None and threading.current_thread() is threading.main_thread():
            signal.signal(sig, signal.SIG_DFL)


class AgentXApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "agentx-tui"
    ENABLE_COMMAND_PALETTE = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("p", "pause", "pause"),
        Binding("space", "pause", "pause", show=False),
        Binding("plus,equals_sign", "users_up", "+user", key_display="+"),
        Binding("minus", "users_down", "-user", key_display="-"),
        *(Binding(str(n), f"maximize({n})", f"{n}", show=False) for n in range(10)),
        Binding("escape", "restore", "back", show=False, key_display="esc"),
        Binding("t", "next_theme", "theme"),
        Binding("c", "edit_cost", "cost"),
        Binding("w", "switch_workload", "workload"),
        Binding("s", "save_svg", "svg"),
        Binding("r", "reset", "reset"),
        Binding("o", "sort", "sort", show=False),
        Binding("O", "sort_reverse", "reverse sort", show=False),
        # A sweep's frontier pane: its x axis (North Star / decode) and its y (tok/s/GPU / tasks/h/GPU).
        # Not in the footer (80 columns are full); the pane's border and the help name them.
        Binding("x", "frontier_x", "frontier x", show=False),
        Binding("y", "frontier_y", "frontier y", show=False),
        Binding("full_stop", "step_fwd", "step", key_display="."),
        Binding("comma", "step_back", "back", key_display=","),
        Binding("left_square_bracket", "slower", "÷2", key_display="["),
        Binding("right_square_bracket", "faster", "×2", key_display="]"),
        Binding("home", "first", "start", show=False, priority=True),
        Binding("end", "last", "end", show=False, priority=True),
        Binding("question_mark", "help", "help", key_display="?"),
    ]

    # The help's words for each action: at most HELP_TEXT_WIDTH columns, so that the help fits whole in an
    # 80×24 terminal. An action of a pair shares its partner's row (`HELP_ROW_OF`): `+ -  one user more / fewer`.
    KEY_HELP: ClassVar[dict[str, str]] = {
        "quit": "quit (stops a launched vLLM server)",
        "pause": "pause / resume the load; the run's clock stops",
        "users_up": "one concurrent user more / fewer",
        "restore": "restore the maximised pane",
        "next_theme": "next theme",
        "edit_cost": "edit cost: USD per GPU-hour and GPUs",
        "switch_workload": "switch the workload (requests under way end first)",
        "save_svg": "save an SVG screenshot (API keys masked)",
        "reset": "reset windows and histories",
        "sort": "sort users by the next column / reverse the sort",
        "frontier_x": "frontier: x North Star / decode; y tok/s / tasks per GPU",
        "step_fwd": "step one tick forward / back",
        "slower": "half / double speed",
        "first": "go to the start / the end",
        "help": "this help",
    }
    HELP_ROW_OF: ClassVar[dict[str, str]] = {
        "users_down": "users_up",
        "sort_reverse": "sort",
        "frontier_y": "frontier_x",
        "step_back": "step_fwd",
        "faster": "slower",
        "last": "first",
    }

    # repaint=False: a new Snapshot repaints only the widgets whose figures changed, not the whole screen.
    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, init=False, repaint=False)

    def __init__(
        self,
        source: SnapshotSource,
        controls: LiveControls | ReplayControls | None,
        *,
        theme: str | None = None,
        refresh_s: float = 0.5,
        screenshot_dir: Path | None = None,
        title: str = "agentx-tui",
        secrets: Sequence[str] = (),
    ) -> None:
        # Read before Textual's App.__init__, which consumes NO_COLOR for its own monochrome filter.
        monochrome = no_color()
        super().__init__()
        self.source = source
        self.controls = controls
        self.refresh_s = max(refresh_s, MIN_REFRESH_S)
        self.screenshot_dir = screenshot_dir
        self.title = title
        self.secrets = tuple(secret for secret in secrets if secret)
        self.history = History()
        self._pending: Snapshot | None = None
        self._last_seq: int | None = None
        self._log_lines: list[tuple[str, str]] = []
        self._quitting = False
        loaded = load_themes([BUNDLED_DIR, user_theme_dir()])
        for item in loaded.themes:
            self.register_theme(item)
        self.theme_names = [item.name for item in loaded.themes]
        self._problems = list(loaded.problems)
        chosen, problem = choose_theme(theme, self.theme_names, monochrome)
        if problem:
            self._problems.append(problem)
        self.theme = chosen

    async def run_async(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().run_async(*args, **kwargs)  # (what `exit` was given: a test's screenshot)
        finally:
            _release_job_control()

    # --- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield RunHeader(self.title, self.controls, id="header").data_bind(snapshot=AgentXApp.snapshot)
        with VerticalScroll(id="body"):
            for pane_type in PANES:
                yield pane_type(self.history, id=pane_type.pane_id()).data_bind(snapshot=AgentXApp.snapshot)
        yield Static("", id="too-small")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for problem in self._problems:
            self.notify(problem, title="theme", severity="warning", timeout=10)
        self.set_interval(self.refresh_s, self.render_latest, name="ui-clock")
        self._consume()
        self.query_one("#body").focus()

    def on_resize(self, event: Resize) -> None:
        width, height = event.size
        small = width < MIN_SIZE[0] or height < MIN_SIZE[1]
        notice = self.query_one("#too-small", Static)
        notice.update(f"terminal too small: need {MIN_SIZE[0]}×{MIN_SIZE[1]}, have {width}×{height}")
        self.screen.set_class(small, "-too-small")
        wide = width >= WIDE_SIZE[0] and height >= WIDE_SIZE[1]
        body = self.query_one("#body")
        body.set_class(wide, "-wide")
        body.set_class(not wide and height >= ROOMY_HEIGHT, "-roomy")

    # --- data in --------------------------------------------------------------------------------

    @work(exclusive=True, group="source")
    async def _consume(self) -> None:
        try:
            async for snap in self.source.snapshots():
                self.post_message(SnapshotArrived(snap))
        except Exception as exc:  # any failure of the source ends the stream; the user sees why
            self.post_message(SourceEnded(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(SourceEnded())

    @on(SnapshotArrived)
    def _arrived(self, message: SnapshotArrived) -> None:
        snap = message.snapshot
        if self._last_seq is not None and snap.seq < self._last_seq:
            self.history.clear()  # a replay seeked backwards: the old history no longer leads here
        self._last_seq = snap.seq
        self.history.add(snap)
        self._log_lines += [("server", scrub(line, self.secrets)) for line in snap.server_log]
        self._log_lines += [("event", scrub(line, self.secrets)) for line in snap.events]
        self._pending = snap

    @on(SourceEnded)
    def _ended(self, message: SourceEnded) -> None:
        self.render_latest()
        header = self.query_one(RunHeader)
        if message.error:
            header.ended = "source failed"
            self._log_lines.append(("event", scrub(f"snapshot source failed: {message.error}", self.secrets)))
            self.notify(scrub(message.error, self.secrets), title="source failed", severity="error")
        else:
            header.ended = "run ended · q quits"
        header.refresh_view()
        self.render_latest()

    def render_latest(self) -> None:
        """The UI clock: show the newest Snapshot, if a new one came since the last draw."""
        # The clock can tick before the panes are mounted or while the app shuts down (seen on a loaded
        # machine): the lines then wait for a tick that has a log to write them to.
        logs = self.query(LogPane)
        if self._log_lines and logs and logs.first().ready:
            logs.first().write(self._log_lines)
            self._log_lines = []
        if self._pending is not None:
            snap, self._pending = self._pending, None
            self.snapshot = snap

    # --- keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # False hides a key from the footer and help and disables it: replay has no users to add.
        if action == "pause":
            return self.controls is not None
        if action in LIVE_ONLY:
            return isinstance(self.controls, LiveControls)
        if action in REPLAY_ONLY:
            return isinstance(self.controls, ReplayControls)
        if action in SWEEP_ONLY:
            return self.snapshot is not None and self.snapshot.sweep is not None
        return True

    async def action_quit(self) -> None:
        if self._quitting:
            return
        self._quitting = True
        if isinstance(self.controls, LiveControls):
            self.notify("stopping…", timeout=30)
            await self.controls.shutdown("quit from the dashboard")
        self.exit()

    def action_pause(self) -> None:
        if self.controls is None:
            return
        if self.controls.paused:
            self.controls.resume()
        else:
            self.controls.pause()
        self.query_one(RunHeader).refresh_view()

    def _change_users(self, delta: int) -> None:
        if not isinstance(self.controls, LiveControls):
            return
        self.controls.set_users(max(0, self.controls.users + delta))
        self.query_one(RunHeader).refresh_view()

    def action_users_up(self) -> None:
        self._change_users(+1)

    def action_users_down(self) -> None:
        self._change_users(-1)

    def action_maximize(self, key: int) -> None:
        pane = next(pane for pane in self.query(Pane) if key == pane.KEY)
        self.screen.maximize(pane, container=False)

    def action_restore(self) -> None:
        self.screen.minimize()

    def action_next_theme(self) -> None:
        names = self.theme_names
        following = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.theme = following
        self.query_one(UsersPane).restyle()
        self.notify(f"theme {following}", timeout=2)

    def action_edit_cost(self) -> None:
        if not isinstance(self.controls, LiveControls):
            return
        cost = self.snapshot.cost if self.snapshot else None
        self.push_screen(
            CostScreen(cost.usd_per_gpu_hour if cost else None, cost.gpus if cost else None),
            self._price_edited,
        )

    def action_switch_workload(self) -> None:
        if not isinstance(self.controls, LiveControls):
            return
        self.push_screen(WorkloadScreen(self.controls.workloads(), self.controls.workload), self._workload_chosen)

    def _workload_chosen(self, name: str | None) -> None:
        if name is None or not isinstance(self.controls, LiveControls):
            return
        problem = self.controls.set_workload(name)
        if problem:
            self.notify(problem, title="workload", severity="warning", timeout=6)
        else:
            self.notify(f"switching to {name}: sessions finish their request first", timeout=4)
        self.query_one(RunHeader).refresh_view()

    def _price_edited(self, edit: PriceEdit | None) -> None:
        if edit is None or not isinstance(self.controls, LiveControls):
            return
        self.controls.set_price(edit.usd_per_gpu_hour, edit.gpus)
        self.notify("price set; the meter uses it from the next tick", timeout=3)

    def action_save_svg(self) -> None:
        directory = self.screenshot_dir or Path.cwd()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = directory / f"agentx-tui-{stamp}.svg"
        counter = 1
        while path.exists():
            counter += 1
            path = directory / f"agentx-tui-{stamp}-{counter}.svg"
        svg = scrub(self.export_screenshot(), self.secrets)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(svg, encoding="utf-8")
        except OSError as exc:
            self.notify(f"cannot save {path}: {exc.strerror or exc}", severity="error")
            return
        self.notify(f"saved {path}", title="screenshot", timeout=4)
        # The notification fades; the log keeps where the file went.
        self._log_lines.append(("event", f"{time.strftime('%H:%M:%S')} screenshot saved to {path}"))

    def action_reset(self) -> None:
        if isinstance(self.controls, LiveControls):
            self.controls.reset_windows()
        self.history.clear()
        for pane in self.query(Pane):
            pane.clear_history()
        self.notify("windows reset", timeout=2)

    def action_sort(self) -> None:
        self.query_one(UsersPane).cycle_sort()

    def action_sort_reverse(self) -> None:
        self.query_one(UsersPane).reverse_sort()

    def action_frontier_x(self) -> None:
        # The pane's border names the axis it shows; a notice only when there is no other to show.
        refused = self.query_one(FrontierPane).flip_x()
        if refused:
            self.notify(refused, title="frontier", timeout=4)

    def action_frontier_y(self) -> None:
        self.query_one(FrontierPane).flip_y()

    def _on_replay(self, move: Callable[[ReplayControls], None]) -> None:
        """Move a replay (a no-op on a live run), then redraw the header that says where it is."""
        if isinstance(self.controls, ReplayControls):
            move(self.controls)
            self.query_one(RunHeader).refresh_view()

    def action_step_fwd(self) -> None:
        self._on_replay(lambda replay: replay.step(1))

    def action_step_back(self) -> None:
        self._on_replay(lambda replay: replay.step(-1))

    def action_slower(self) -> None:
        self._on_replay(lambda replay: replay.set_speed(replay.speed / 2))

    def action_faster(self) -> None:
        self._on_replay(lambda replay: replay.set_speed(replay.speed * 2))

    def action_first(self) -> None:
        self._on_replay(lambda replay: replay.seek(0))

    def action_last(self) -> None:
        self._on_replay(lambda replay: replay.seek(max(replay.length - 1, 0)))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.key_help()))

    def key_help(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every binding usable now, for the help screen."""
        rows: dict[str, list[str]] = {}
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            action = binding.action.split("(")[0]
            if action == "maximize" or not self.check_action(action, ()):
                continue
            shown = binding.key_display or binding.key
            rows.setdefault(self.HELP_ROW_OF.get(action, action), []).append(shown)
        result = [*_pane_keys(), (str(ThroughputPane.KEY), f"p90 bar: {bar_legend()}")]
        result += [(" ".join(keys), self.KEY_HELP[action]) for action, keys in rows.items()]
        result.append(("tab", "move focus (the body scrolls with ↑ ↓ pgup pgdn)"))
        return result


# The help's widest text, in columns: an 80-column terminal's help box (90% of it, less its border and
# padding) less the keys' column.
HELP_TEXT_WIDTH = 58


def _pane_keys() -> list[tuple[str, str]]:
    """The help's rows for the digit keys, from the panes themselves: those always shown, then those
    shown only when the run has what they show, as many to a row as fit HELP_TEXT_WIDTH."""
    panes = sorted(PANES, key=lambda p: p.KEY or 10)  # 0 after 9, as on the keyboard
    always = [p for p in panes if not p.SHOWN_WHEN]
    sometimes = [p for p in panes if p.SHOWN_WHEN]
    keys = f"{always[0].KEY}–{always[-1].KEY}"
    result = _named_rows(keys, "maximise a pane: ", [f"{p.KEY} {p.TITLE}" for p in always])
    if sometimes:
        result += _named_rows(
            " ".join(str(p.KEY) for p in sometimes),
            "maximise ",
            [f"{p.KEY} {p.TITLE} ({p.SHOWN_WHEN})" for p in sometimes],
        )
    return result


def _named_rows(keys: str, lead: str, names: list[str]) -> list[tuple[str, str]]:
    """`names` joined by " · " after `lead`, in rows of at most HELP_TEXT_WIDTH columns; `keys` on the first."""
    rows = [lead + names[0]]
    for name in names[1:]:
        joined = f"{rows[-1]} · {name}"
        if len(joined) <= HELP_TEXT_WIDTH:
            rows[-1] = joined
        else:
            rows.append(name)
    return [(keys if i == 0 else "", row) for i, row in enumerate(rows)]
