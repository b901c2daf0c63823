"""Query routing for ``mode="auto"`` (seed 004 FR-023, A-012): pattern rules on the query text.

The route does not filter anything out; it names the memory kinds to favour (the ``kind_bonus``
component) and, for identifier-like queries, asks for lexical evidence to weigh more, since an
issue number or a function name is matched by its letters, not by its meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Every pattern here runs on caller text, so each must stay linear in its length: a match may only
# start where a run of its characters starts (a look-behind), and no two adjacent quantifiers may
# share characters (``\s*[-#]?\s*`` on a long run of spaces is quadratic). tests/unit/core/
# test_routing.py feeds each one adversarial input.

# "#123", "PR 45", "PR-45", "pull request 7", "issue 12", "JIRA-123"-style keys, commit hashes.
_ISSUE = re.compile(
    r"(?:^|\s)#\d+\b|\b(?:pr|pull request|issue|ticket|bug)(?:\s*[-#])?\s*\d+\b"
    r"|(?-i:\b[A-Z][A-Z0-9]{1,9}-\d+\b)|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b",
    re.I,
)
# Paths with an extension or a slash, dotted/qualified names, call syntax, camelCase, snake_case.
_PATH = re.compile(
    r"(?<![\w.-])[\w.-]+/[\w./-]|(?<![\w-])[\w-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|kt|rb|c|h|cpp|cs|md|toml|ya?ml)\b"
)
_SYMBOL = re.compile(
    r"\b\w+\(\)|\b[a-z]+[A-Z]\w*\b|\b[a-z0-9]+_[a-z0-9_]+\b|\b[A-Z][a-z]+[A-Z]\w*\b|\b\w+(?:\.|::)\w+\("
)
_TRACE = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|\bat [\w.$]+\([\w.]+:\d+\)"
    r"|\b\w+(?:Error|Exception)\b|panicked at|segmentation fault",
    re.I,
)
_INTENT = re.compile(
    r"\b(why|design|designed|decide|decided|decision|rationale|architecture|implement|implemented|"
    r"implementation|approach|should we|trade-?offs?|requirements?|spec)\b",
    re.I,
)

# Seed 004's kinds join the routes FR-023 sends them to: issue/PR ids -> logs (changes, issues, PR
# context); file/symbol/stack -> runbooks and sections; implement/design/why -> specs and ADRs.
CHANGE_KINDS = (
    "change", "session", "test_history", "problem", "solution", "failed_tactic", "issue", "pr_context",
    "release_note",
)  # fmt: skip
CODE_KINDS = (
    "function", "component", "code_pattern", "test_history", "solution", "failed_tactic", "problem",
    "runbook", "section", "ddl",
)  # fmt: skip
DESIGN_KINDS = ("design", "requirements", "code_pattern", "fact", "preference", "user_preference", "section")


@dataclass(frozen=True)
class Route:
    """A route: its name, the kinds it favours, and how much to weigh lexical against dense."""

    name: str
    preferred_kinds: tuple[str, ...]
    sparse_boost: float = 1.0


GENERAL = Route("general", ())
CHANGE_FIRST = Route("change_first", CHANGE_KINDS, sparse_boost=2.0)
CODE_FIRST = Route("code_first", CODE_KINDS, sparse_boost=1.5)
DESIGN_FIRST = Route("design_first", DESIGN_KINDS)
# Session start (seed 002 "ambient" reads): what shapes how to work here, then open problems.
AMBIENT = Route(
    "ambient", ("preference", "user_preference", "fact", "design", "requirements", "problem", "solution")
)
ROUTES = {r.name: r for r in (GENERAL, CHANGE_FIRST, CODE_FIRST, DESIGN_FIRST, AMBIENT)}


def route_for(query: str) -> Route:
    """Pick a route by query shape; the first matching rule wins, in the order of FR-023."""
    if _ISSUE.search(query):
        return CHANGE_FIRST
    if _TRACE.search(query) or _PATH.search(query) or _SYMBOL.search(query):
        return CODE_FIRST
    if _INTENT.search(query):
        return DESIGN_FIRST
    return GENERAL
