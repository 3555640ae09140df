"""The results as a Markdown table (the same text on the console and in docs/performance.md)."""

from __future__ import annotations

from typing import Any

HEAD = ("| Figure | Median | Spread (p10–p90; min–max if n < 5) | n | Reference (median) | Difference · ratio | Target |\n"
        "|---|---:|---:|---:|---:|---:|---|")


def _num(x: float | None, unit: str) -> str:
    if x is None:
        return "–"
    text = f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"
    return f"{text} {unit}"


def row(r: dict[str, Any]) -> str:
    """One result as a table row."""
    s, unit = r["summary"], r["unit"]
    lo, hi = ("p10", "p90") if s["n"] >= 5 else ("min", "max")
    spread = "–" if s["n"] < 2 else f"{_num(s[lo], '')}–{_num(s[hi], unit)}".replace(" –", "–")
    ref = diff = "–"
    if "reference" in r:
        ref = f"{_num(r['reference']['summary']['median'], unit)} ({r['reference']['title']})"
        diff = f"{'+' if r['difference'] >= 0 else ''}{_num(r['difference'], unit)} · {r['ratio']}x"
    target = "–"
    if "target" in r:
        t = r["target"]
        target = f"{'met' if t['met'] else '**missed**'}: {t['text']}"
        if t["on"] == "median" and t["text"].startswith("no more than"):
            target += f" (≤ {t['limit']:,.0f} {unit})"
    return f"| {r['title']} | {_num(s['median'], unit)} | {spread} | {s['n']} | {ref} | {diff} | {target} |"


def table(results: list[dict[str, Any]]) -> str:
    """The whole table."""
    return "\n".join([HEAD, *(row(r) for r in results)])


def errors(errs: list[dict[str, str]]) -> str:
    """Suites that crashed, one line each."""
    return "\n".join(f"- **{e['suite']} crashed**: {e['error'].strip().splitlines()[-1]}" for e in errs)
