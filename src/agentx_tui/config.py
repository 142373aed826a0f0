"""The settings of one run, validated once from the command line (and the environment)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from agentx_tui.errors import UsageError

DEFAULT_SIM_PROFILE = "h200/llama-3.1-8b"
API_KEY_ENV = ("AGENTX_API_KEY", "VLLM_API_KEY", "OPENAI_API_KEY")

TargetKind = Literal["attach", "serve", "sim"]


def api_key_from_env() -> str | None:
    for name in API_KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return None


@dataclass(frozen=True)
class RunConfig:
    target: TargetKind
    attach: tuple[str, ...] = ()
    serve: str | None = None
    vllm_args: tuple[str, ...] = ()
    sim_profile: str = DEFAULT_SIM_PROFILE
    port: int | None = None
    vllm_cmd: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never printed, never recorded
    startup_timeout_s: float = 900.0
    gpu_metrics: str | None = None
    workload: str = "coding-agent"
    users: int = 8
    scale: float | None = None
    duration_s: float | None = None
    seed: int = 0
    gpu_price: float | None = None
    cost_profile: str | None = None
    gpus: int | None = None
    headless: bool = False
    report: Path | None = None
    record: Path | None = None
    checks: tuple[str, ...] = ()
    interval_s: float = 1.0
    refresh_s: float = 0.5
    theme: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, api_key: str | None) -> RunConfig:
        chosen = [
            name for name, given in (("--attach", args.attach), ("--serve", args.serve), ("--sim", args.sim)) if given
        ]
        if len(chosen) > 1:
            raise UsageError(f"{' and '.join(chosen)} cannot be used together.", "Choose one target.")
        target: TargetKind = "attach" if args.attach else "serve" if args.serve else "sim"
        if target == "attach" and args.port is not None:
            raise UsageError(
                "--port is for a launched or simulated server, not --attach.", "Put the port in the URL instead."
            )
        if args.vllm_arg and target != "serve":
            raise UsageError("--vllm-arg only applies with --serve.")
        _positive("--users", args.users, allow_zero=True)
        _positive("--interval", args.interval)
        _positive("--refresh", args.refresh)
        _positive("--startup-timeout", args.startup_timeout)
        for flag, value in (
            ("--duration", args.duration),
            ("--scale", args.scale),
            ("--gpu-price", args.gpu_price),
            ("--gpus", args.gpus),
        ):
            if value is not None:
                _positive(flag, value)
        if args.port is not None and not 0 < args.port < 65536:
            raise UsageError(f"--port {args.port} is not a port number.", "Use 1–65535.")
        if args.gpu_price is not None and args.cost_profile:
            raise UsageError("--gpu-price and --cost-profile cannot be used together.")
        for url in args.attach:
            _check_url("--attach", url)
        if args.gpu_metrics:
            _check_url("--gpu-metrics", args.gpu_metrics)
        return cls(
            target=target,
            attach=tuple(args.attach),
            serve=args.serve,
            vllm_args=tuple(args.vllm_arg),
            sim_profile=args.sim or DEFAULT_SIM_PROFILE,
            port=args.port,
            vllm_cmd=args.vllm_cmd,
            api_key=api_key,
            startup_timeout_s=args.startup_timeout,
            gpu_metrics=args.gpu_metrics,
            workload=args.workload,
            users=args.users,
            scale=args.scale,
            duration_s=args.duration,
            seed=args.seed,
            gpu_price=args.gpu_price,
            cost_profile=args.cost_profile,
            gpus=args.gpus,
            headless=args.headless,
            report=args.report,
            record=args.record,
            checks=tuple(args.check),
            interval_s=args.interval,
            refresh_s=args.refresh,
            theme=args.theme,
        )

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,) if self.api_key else ()

    def settings_for_recording(self) -> dict[str, Any]:
        """The settings a recording's header keeps: everything but the API key."""
        return {
            "target": self.target,
            "attach": list(self.attach),
            "serve": self.serve,
            "vllm_args": list(self.vllm_args),
            "sim_profile": self.sim_profile,
            "workload": self.workload,
            "users": self.users,
            "scale": self.scale,
            "duration_s": self.duration_s,
            "seed": self.seed,
            "gpu_price": self.gpu_price,
            "cost_profile": self.cost_profile,
            "gpus": self.gpus,
            "interval_s": self.interval_s,
            "api_key_set": self.api_key is not None,
        }


def _check_url(flag: str, url: str) -> None:
    """Refuse a URL no HTTP client could use, before anything starts (a bare host:port is fine)."""
    text = url.strip()
    parts = urlsplit(text if "://" in text else "http://" + text)
    try:
        parts.port  # noqa: B018 - reading it validates the port
    except ValueError as exc:
        raise UsageError(f"{flag} {url!r} has an invalid port.", "Write it like http://HOST:8000.") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{flag} {url!r} is not an http(s) URL.", "Write it like http://HOST:8000.")


def _positive(flag: str, value: float, *, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(f"{flag} must be {'zero or more' if allow_zero else 'more than zero'}, not {value}.")
