"""Query routing: the rules pick the right route, and no pattern is super-linear on hostile text.

A pattern that backtracks quadratically holds the interpreter lock for seconds on a long run of
one character, freezing every other call of the server (issue 8). Each pattern that reads caller
text gets adversarial inputs of 100,000 characters (ten times the query limit): a linear scan
takes milliseconds, a quadratic one tens of seconds, so the generous bound below cannot be met
by a quadratic pattern and is never approached by a linear one.
"""

from __future__ import annotations

import base64
import random
import re
import time

import pytest

from indexer import captures, resolve, tokens
from memory_service.core.search import routing
from memory_service.core.search import scoring as ranking
from memory_service.embeddings import bm25

N = 100_000
_rng = random.Random(8)
ADVERSARIAL = {
    "one letter": "A" * N,
    "lower run": "a" * N,
    "blanks": " " * N,
    "keyword then blanks": "pr" + " " * N,
    "repeated keyword": "pr " * (N // 3),
    "dashed": "a-" * (N // 2),
    "dotted": "a." * (N // 2),
    "base64": base64.b64encode(_rng.randbytes(N * 3 // 4)).decode(),
    "hex": "abc123" * (N // 6),
    "minified js": "var a=function(b){return b.c(d)};" * (N // 33),
    "snake": "a_" * (N // 2),
    "file quotes": 'File "' * (N // 6),
    "java frames": "at a." * (N // 5),
    "scopes": "a::" * (N // 3),
    "stars": "*" * N,
    "camel": "aB" * (N // 2),
    "digits": "1" * N,
    "mixed": "Aa1_-./" * (N // 7),
}
PATTERNS: dict[str, re.Pattern[str]] = {
    "routing._ISSUE": routing._ISSUE,
    "routing._PATH": routing._PATH,
    "routing._SYMBOL": routing._SYMBOL,
    "routing._TRACE": routing._TRACE,
    "routing._INTENT": routing._INTENT,
    "bm25._WORD": bm25._WORD,
    "bm25._PART": bm25._PART,
    "ranking._TERM": ranking._TERM,
    "tokens._WORD": tokens._WORD,
    "captures._GENERIC_ARGS": captures._GENERIC_ARGS,
    "resolve._SEPARATORS": resolve._SEPARATORS,
}
BOUND_SECONDS = 1.0  # per pattern and input; measured: under 0.05 s for every pair


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_is_linear_on_adversarial_text(name: str) -> None:
    pattern = PATTERNS[name]
    for label, text in ADVERSARIAL.items():
        started = time.perf_counter()
        for _ in pattern.finditer(text):
            pass
        elapsed = time.perf_counter() - started
        assert elapsed < BOUND_SECONDS, f"{name} took {elapsed:.2f} s on {label!r}: super-linear"


def test_route_for_whole_query_is_linear() -> None:
    for label, text in ADVERSARIAL.items():
        started = time.perf_counter()
        routing.route_for(text)
        assert time.perf_counter() - started < BOUND_SECONDS, label


@pytest.mark.parametrize(
    ("query", "route"),
    [
        ("what broke in PR 45", "change_first"),
        ("pr   -  12 regression", "change_first"),
        ("fix for issue #7", "change_first"),
        ("where is src/auth/session.py used", "code_first"),
        ("the config.toml loader", "code_first"),
        ("parse_user_input fails", "code_first"),
        ("KeyError in the importer", "code_first"),
        ("why did we pick SQLite", "design_first"),
        ("favourite colour of the team", "general"),
    ],
)
def test_routes(query: str, route: str) -> None:
    assert routing.route_for(query).name == route
