"""Summaries of repeated measurements and the result records the runner stores."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation."""
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(values: list[float]) -> dict[str, float]:
    """Median, p10, p90, min, max, mean and count, rounded for reading."""
    if not values:
        return {"n": 0}
    return {"n": len(values), "median": _r(statistics.median(values)), "p10": _r(percentile(values, 10)),
            "p90": _r(percentile(values, 90)), "min": _r(min(values)), "max": _r(max(values)),
            "mean": _r(statistics.fmean(values))}


def _r(x: float) -> float:
    return round(x, 3 if abs(x) < 10 else 1)


@dataclass
class Target:
    """A figure a result should stay under (or over)."""

    limit: float
    text: str
    below: bool = True

    def met(self, value: float) -> bool:
        """Is the value on the right side of the limit?"""
        return value < self.limit if self.below else value > self.limit


@dataclass
class Result:
    """One measured figure: samples, their summary, and optionally a reference and a target."""

    id: str
    title: str
    unit: str
    samples: list[float]
    reference: list[float] | None = None
    reference_title: str = ""
    target: Target | None = None
    target_on: str = "median"  # which figure the target is judged on: median, difference, ratio
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record written to results/*.json."""
        out: dict[str, Any] = {"id": self.id, "title": self.title, "unit": self.unit,
                               "summary": summarize(self.samples), "samples": [_r(s) for s in self.samples]}
        if self.reference:
            ref = summarize(self.reference)
            out["reference"] = {"title": self.reference_title, "summary": ref,
                                "samples": [_r(s) for s in self.reference]}
            mine = out["summary"]["median"]
            out["difference"] = _r(mine - ref["median"])
            out["ratio"] = round(mine / ref["median"], 2) if ref["median"] else None
        if self.target is not None:
            value = out["summary"]["median"] if self.target_on == "median" else out.get(self.target_on)
            out["target"] = {**asdict(self.target), "on": self.target_on,
                             "met": bool(value is not None and self.target.met(value))}
        if self.notes:
            out["notes"] = self.notes
        if self.extra:
            out["extra"] = self.extra
        return out
