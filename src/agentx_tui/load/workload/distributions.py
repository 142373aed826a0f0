"""Length and latency distributions of a workload (workloads/README.md).

In YAML a distribution is either a bare number (a constant) or a mapping with a `dist` key:

    output_tokens: 400
    output_tokens: {dist: uniform, min: 200, max: 600}
    output_tokens: {dist: normal, mean: 400, std: 100, min: 50, max: 1000}
    output_tokens: {dist: lognormal, mean: 400, std: 300, min: 50, max: 4000}

`mean`/`std` of a lognormal are those of the value itself (not of its logarithm), so a preset reads the
same whatever the shape. `min`/`max` clamp every draw.
"""

from __future__ import annotations

import math
import random
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator


class _Dist(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    min: float | None = Field(default=None, ge=0)
    max: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds_ordered(self) -> _Dist:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self

    def _raw(self, rng: random.Random) -> float:
        raise NotImplementedError

    def draw(self, rng: random.Random) -> float:
        value = self._raw(rng)
        if self.min is not None:
            value = max(value, self.min)
        if self.max is not None:
            value = min(value, self.max)
        return value

    def draw_int(self, rng: random.Random, floor: int = 1) -> int:
        return max(floor, round(self.draw(rng)))

    @property
    def mean_value(self) -> float:
        """The mean before clamping (clamped to the bounds), used for sizing, not for sampling."""
        value = self._mean()
        if self.min is not None:
            value = max(value, self.min)
        if self.max is not None:
            value = min(value, self.max)
        return value

    @property
    def upper(self) -> float:
        """A value draws rarely exceed: the max bound, else mean + 3 std."""
        return self.max if self.max is not None else self._upper()

    def _mean(self) -> float:
        raise NotImplementedError

    def _upper(self) -> float:
        raise NotImplementedError

    def scaled(self, factor: float) -> _Dist:
        raise NotImplementedError

    def _scaled_bounds(self, factor: float) -> dict[str, float | None]:
        return {
            "min": None if self.min is None else self.min * factor,
            "max": None if self.max is None else self.max * factor,
        }


class Constant(_Dist):
    dist: Literal["constant"] = "constant"
    value: float = Field(ge=0)

    def _raw(self, rng: random.Random) -> float:
        return self.value

    def _mean(self) -> float:
        return self.value

    def _upper(self) -> float:
        return self.value

    def scaled(self, factor: float) -> Constant:
        return Constant(value=self.value * factor, **self._scaled_bounds(factor))


class Uniform(_Dist):
    dist: Literal["uniform"]
    min: float = Field(ge=0)
    max: float = Field(ge=0)

    def _raw(self, rng: random.Random) -> float:
        return rng.uniform(self.min, self.max)

    def _mean(self) -> float:
        return (self.min + self.max) / 2

    def _upper(self) -> float:
        return self.max

    def scaled(self, factor: float) -> Uniform:
        return Uniform(dist="uniform", min=self.min * factor, max=self.max * factor)


class Normal(_Dist):
    dist: Literal["normal"]
    mean: float
    std: float = Field(ge=0)

    def _raw(self, rng: random.Random) -> float:
        return rng.gauss(self.mean, self.std)

    def _mean(self) -> float:
        return self.mean

    def _upper(self) -> float:
        return self.mean + 3 * self.std

    def scaled(self, factor: float) -> Normal:
        return Normal(dist="normal", mean=self.mean * factor, std=self.std * factor, **self._scaled_bounds(factor))


class LogNormal(_Dist):
    dist: Literal["lognormal"]
    mean: float = Field(gt=0)
    std: float = Field(ge=0)

    def _params(self) -> tuple[float, float]:
        sigma2 = math.log1p((self.std / self.mean) ** 2)
        return math.log(self.mean) - sigma2 / 2, math.sqrt(sigma2)

    def _raw(self, rng: random.Random) -> float:
        mu, sigma = self._params()
        return rng.lognormvariate(mu, sigma)

    def _mean(self) -> float:
        return self.mean

    def _upper(self) -> float:
        mu, sigma = self._params()
        return math.exp(mu + 3 * sigma)

    def scaled(self, factor: float) -> LogNormal:
        return LogNormal(
            dist="lognormal", mean=self.mean * factor, std=self.std * factor, **self._scaled_bounds(factor)
        )


def _coerce(value: Any) -> Any:
    """A bare number in YAML means a constant."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"dist": "constant", "value": value}
    return value


Dist = Annotated[Constant | Uniform | Normal | LogNormal, BeforeValidator(_coerce), Field(discriminator="dist")]

DIST_HELP = (
    "a number, or a mapping with dist: constant (value), uniform (min, max), "
    "normal (mean, std, optional min/max) or lognormal (mean, std, optional min/max)"
)
