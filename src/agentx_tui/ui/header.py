"""The run header: what is being measured, and in what state, in one line (two below ~160 columns), with
the run's AgentX verdict (docs/sweeps.md, "AgentX validity") in as many words as fit without a line more."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from agentx_tui.control import LiveControls, ReplayControls
from agentx_tui.snapshot import AgentXVerdict, Snapshot
from agentx_tui.snapshot.bottleneck import simulator_behind
from agentx_tui.ui._format import duration
from agentx_tui.ui.panes._base import pack
from agentx_tui.units import outputs_scaled

_STATE_STYLE = {
    "starting": "bold $accent",
    "running": "bold $success",
    "paused": "bold $warning",
    "server down": "bold reverse $error",
    "stopping": "bold $secondary",
    "finished": "bold $secondary",
}
_SEP = Content.styled(" │ ", "$text-muted")
# The AgentX verdict: valid, not valid (a rule broken), not known (a rule that cannot be checked), or
# pending (nothing broken yet, but not every rule met: never shown as valid).
_AGENTX_STYLE = {True: "bold $success", False: "bold $error", None: "bold $warning", "pending": "bold $accent"}
_AGENTX_BADGE = {True: "AgentX ✓", False: "AgentX ✗", None: "AgentX ?", "pending": "AgentX …"}  # no words fit


class RunHeader(Static):
    # repaint=False: a new Snapshot repaints only the widgets whose figures changed, not the whole screen.
    snapshot: reactive[Snapshot | None] = reactive(None, always_update=True, init=False, repaint=False)

    def __init__(self, title: str, controls: LiveControls | ReplayControls | None, *, id: str | None = None):
        super().__init__(id=id)
        self.title = title
        self.controls = controls
        self.ended: str | None = None  # set when the source's stream ended: why, for the header
        self._shown: Content | None = None

    def watch_snapshot(self) -> None:
        self.refresh_view()

    def on_resize(self) -> None:
        self.refresh_view()

    def refresh_view(self) -> None:
        snap = self.snapshot
        parts: list[Content] = [Content.styled(self.title, "bold $primary")]
        if snap is None:
            parts.append(Content.styled("waiting for the first snapshot…", "$text-muted"))
        else:
            run = snap.run
            # The badge says "simulated" already; the target label need not say it again.
            label = run.target.removeprefix("simulated ") if run.simulated else run.target
            target = Content.assemble(
                *((Content.styled(" SIMULATED ", "bold reverse $warning"), " ") if run.simulated else ()),
                label,
            )
            endpoint = snap.endpoints[0] if snap.endpoints else None
            model = endpoint.model if endpoint and endpoint.model else "n/a"
            version = endpoint.engine_version if endpoint and endpoint.engine_version else "n/a"
            # Narrow terminals drop the self-evident labels so the header stays on two lines.
            named = self.size.width >= 180
            # The run's clock: it stops while the load is paused (`p`), as `--duration` does.
            elapsed = _pair("elapsed" if named else "", duration(snap.clock_s))
            parts += [
                # The state first: it is what a glance at the header is for, and it never wraps away.
                Content.assemble(self._state(run.state), " ", elapsed),
                target,
                _pair("model" if named else "", model),
                _pair("vLLM", version),
                _pair("workload" if named else "", run.workload),
                *self._outputs(run.output_scale),
                self._users(run.users, run.users_lost),
                *self._client(snap),
            ]
        if isinstance(self.controls, ReplayControls):
            parts.append(self._replay(self.controls))
        if self.ended is not None:
            parts.append(Content.styled(self.ended, "bold $text-warning"))
        lines = self._pack(parts, snap.agentx if snap is not None else None)
        content = Content("\n").join(_SEP.join(items) for items in lines)
        if content != self._shown:
            # A layout pass (the whole screen) only when the header may have changed its height.
            relayout = self._shown is None or self._shown.plain.count("\n") != content.plain.count("\n")
            self._shown = content
            self.update(content, layout=relayout)

    def _pack(self, parts: list[Content], verdict: AgentXVerdict | None) -> list[list[Content]]:
        """The parts in lines, with the AgentX verdict in its longest words that add no line: at the end,
        else between two earlier parts; left out when none fits (the log says it all): a header a line
        taller would push the panes below the bottom of an 80×24 terminal."""
        width, gap = self.size.width, _SEP.cell_length
        plain = pack(parts, width, gap)
        if verdict is None:
            return plain
        state: bool | str | None = "pending" if verdict.waiting else verdict.valid  # pending: valid is None
        words = (*verdict.labels(), _AGENTX_BADGE[state])
        forms = [Content.styled(label, _AGENTX_STYLE[state]) for label in words]
        for form in forms:
            for at in range(len(parts), 1, -1):  # never before the title and the run's state
                lines = pack([*parts[:at], form, *parts[at:]], width, gap)
                if len(lines) <= len(plain):
                    return lines
        return plain

    @staticmethod
    def _outputs(factor: float) -> list[Content]:
        """`--output-scale`: said beside the workload, so a screenshot is not taken for a plain run."""
        label = outputs_scaled(factor)
        return [Content.styled(label, "bold $warning")] if label else []

    @staticmethod
    def _client(snap: Snapshot) -> list[Content]:
        """Say when the load generator or the simulator, not the server, limits the figures (the log
        says why)."""
        parts: list[Content] = []
        health = snap.client_health
        if health is not None and health.workers > 1:
            parts.append(_pair("workers", str(health.workers)))
        if health is not None and health.saturated:
            parts.append(Content.styled(" CLIENT-BOUND ", "bold reverse $error"))
        if simulator_behind(snap):
            parts.append(Content.styled(" SIM SATURATED ", "bold reverse $warning"))
        if snap.proxy is not None:
            parts.append(_pair("real agents", str(snap.proxy.live_sessions)))
        return parts

    def _users(self, running: int, lost: int) -> Content:
        """The users driven now, `→ N` while the load moves to the users just asked for (`+`/`-`), and
        the users that dead load workers took with them, apart and in the error colour: a loss never
        reads as a ramp."""
        # What was asked for, less the users lost (their workers' shares of it): where the load is going.
        target = self.controls.users - lost if isinstance(self.controls, LiveControls) else running
        users = _pair("users", f"{running}→{target}" if target != running else str(running))
        if not lost:
            return users
        return Content.assemble(users, Content.styled(f" ({lost} lost)", "bold $error"))

    def _state(self, state: str) -> Content:
        if isinstance(self.controls, LiveControls) and state in ("running", "paused"):
            # The key takes effect on the next tick; show what was asked for at once.
            state = "paused" if self.controls.paused else "running"
        return Content.styled(f"● {state}", _STATE_STYLE.get(state, "bold"))

    @staticmethod
    def _replay(controls: ReplayControls) -> Content:
        where = f"{controls.position + 1}/{controls.length}" if controls.length else "0/0"
        mode = "⏸ paused" if controls.paused else "▶"
        return Content.assemble(
            Content.styled("replay ", "bold $accent"),
            f"{where} ×{controls.speed:g} ",
            Content.styled(mode, "bold"),
        )


def _pair(name: str, text: str) -> Content:
    if not name:
        return Content.styled(text, "bold")
    return Content.assemble(Content.styled(f"{name} ", "$text-muted"), Content.styled(text, "bold"))
