"""Reads what a Grafana dashboard asks Prometheus for: metric names and label names per query.

The tests compare these with what memory-service exports, so a renamed metric or label breaks
the test instead of leaving a panel silently empty. This is a tokenizer for the PromQL the
dashboard uses (selectors, functions, aggregations with by/without, binary operators), not a
full parser: anything it does not recognise (an unknown function, a selector without a metric
name) is an error, so the dashboard stays within what the tests can check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FUNCTIONS = {
    "abs", "avg", "avg_over_time", "ceil", "clamp_min", "clamp_max", "count", "delta", "deriv",
    "floor", "histogram_quantile", "increase", "irate", "label_replace", "max", "max_over_time",
    "min", "min_over_time", "quantile", "rate", "round", "scalar", "sort", "sort_desc", "sum",
    "time", "topk", "bottomk", "vector",
}  # fmt: skip
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
OPERATORS = {"and", "or", "unless", "bool", "offset"}

TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<var>\$\{[^}]+\}|\$\w+)
      | (?P<number>\d+(?:\.\d+)?(?:e[+-]?\d+)?(?:ms|[smhdwy])?)
      | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
      | (?P<matchop>=~|!~|!=|==|<=|>=)
      | (?P<punct>[{}()\[\],=+\-*/%^<>])
    )""",
    re.VERBOSE,
)
LEGEND_LABEL = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass
class Query:
    """What one PromQL expression names: metrics (with the labels their matchers use), grouping
    labels (by/without/on/ignoring), and functions."""

    expr: str
    metrics: dict[str, set[str]] = field(default_factory=dict)
    grouping: set[str] = field(default_factory=set)
    functions: set[str] = field(default_factory=set)


def tokens(expr: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(expr):
        if expr[pos:].strip() == "":
            break
        match = TOKEN.match(expr, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"cannot read PromQL at {expr[pos:]!r} in {expr!r}")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def parse(expr: str) -> Query:
    """The metric names, matcher labels, grouping labels and functions of ``expr``."""
    query = Query(expr)
    toks = tokens(expr)
    i = 0
    depth_range = 0
    while i < len(toks):
        kind, text = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        if text == "[":
            depth_range += 1
        elif text == "]":
            depth_range -= 1
        elif depth_range or kind != "ident":
            if text == "{":
                raise ValueError(f"a selector without a metric name in {expr!r}")
        elif text in GROUPING:
            i, grouped = _label_list(toks, i + 1, expr)
            query.grouping |= grouped
            continue
        elif text in OPERATORS:
            pass
        elif nxt == "(" or (text in FUNCTIONS and nxt in GROUPING):  # sum by (x) (...)
            if text not in FUNCTIONS:
                raise ValueError(f"unknown PromQL function {text!r} in {expr!r}")
            query.functions.add(text)
        else:
            matched: set[str] = set()
            if nxt == "{":
                i, matched = _matchers(toks, i + 2, expr)
            else:
                i += 1
            query.metrics.setdefault(text, set()).update(matched)
            continue
        i += 1
    return query


def _label_list(toks: list[tuple[str, str]], i: int, expr: str) -> tuple[int, set[str]]:
    """``(a, b)`` after by/without/on/ignoring/group_left; returns the index after ``)``."""
    if i >= len(toks) or toks[i][1] != "(":
        return i, set()  # group_left without labels
    labels: set[str] = set()
    i += 1
    while toks[i][1] != ")":
        if toks[i][0] == "ident":
            labels.add(toks[i][1])
        elif toks[i][1] != ",":
            raise ValueError(f"unexpected {toks[i][1]!r} in a label list of {expr!r}")
        i += 1
    return i + 1, labels


def _matchers(toks: list[tuple[str, str]], i: int, expr: str) -> tuple[int, set[str]]:
    """``label="value", ...}`` after a metric name; returns the index after ``}``."""
    labels: set[str] = set()
    while toks[i][1] != "}":
        kind, text = toks[i]
        if kind == "ident" and toks[i + 1][1] in ("=", "!=", "=~", "!~") and toks[i + 2][0] == "string":
            labels.add(text)
            i += 3
        elif text == ",":
            i += 1
        else:
            raise ValueError(f"unexpected {text!r} in the matchers of {expr!r}")
    return i + 1, labels


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' nested panels included."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def targets(dashboard: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(panel, target) for every query of the dashboard."""
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            yield panel, target


def legend_labels(target: dict[str, Any]) -> set[str]:
    return set(LEGEND_LABEL.findall(target.get("legendFormat", "")))


def queryable(name: str, kind: str) -> set[str]:
    """The series names PromQL can select from a family, as the text format names them:
    a counter ``x`` (the parser strips ``_total``) is ``x_total``; a histogram ``x`` is
    ``x_bucket``, ``x_sum`` and ``x_count``; a gauge (an info metric too) is its own name."""
    if kind == "counter":
        return {name if name.endswith("_total") else f"{name}_total"}
    if kind == "histogram":
        return {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return {name}
