"""Token shingles and the near-miss similarity find_duplicates reports."""

from __future__ import annotations

import random

import pytest

from indexer import CodeUnit, parse_source
from indexer.shingles import EMPTY, MAX_SHINGLES, K, Shingles, overlap, similarity

ORIGINAL = '''\
def total_with_tax(items, rate):
    """Sum line items and add sales tax."""
    subtotal = 0
    for item in items:
        if item.price > 0:
            subtotal += item.price * item.qty
    return round_cents(subtotal * (1 + rate))
'''

# Renamed, reformatted, one statement added and one operator changed: a type-3 clone.
EDITED = """\
def order_total(lines, tax_rate):
    if not lines:
        return 0
    total = 0
    for line in lines:
        if (line.price >= 0):
            total += line.price * line.qty
    return round_cents(total * (1 + tax_rate))
"""

UNRELATED = '''\
def retry_with_backoff(call, attempts=5):
    """Retry a flaky network call with exponential backoff."""
    delay = 0.1
    for _ in range(attempts):
        try:
            return call()
        except OSError:
            delay *= 2
    raise TimeoutError("gave up")
'''


def _unit(source: str, language: str = "python") -> CodeUnit:
    return parse_source(source.encode(), language, "x").units[0]


def _shingles(source: str, language: str = "python") -> Shingles:
    return Shingles.decode(_unit(source, language).shingles)


def test_encoding_round_trips_and_bad_bytes_decode_to_nothing() -> None:
    shingles = _shingles(ORIGINAL)
    assert shingles.total == len(shingles.kept) > 20 and shingles.complete
    assert Shingles.decode(shingles.encode()) == shingles
    assert Shingles.decode(b"") == EMPTY and Shingles.decode(b"\x01\x02\x03\x04\x05") == EMPTY
    assert overlap(shingles, EMPTY) == 0.0 == similarity(EMPTY, EMPTY)


def test_a_renamed_reformatted_copy_is_identical_and_comments_do_not_count() -> None:
    renamed = ORIGINAL.replace("items", "rows").replace("item", "row").replace("subtotal", "acc")
    commented = renamed.replace("    acc = 0\n", "    # start from nothing\n    acc = 0\n")
    assert similarity(_shingles(ORIGINAL), _shingles(commented)) == pytest.approx(1.0)


def test_a_near_miss_copy_scores_between_unrelated_code_and_a_copy() -> None:
    original, edited, unrelated = _shingles(ORIGINAL), _shingles(EDITED), _shingles(UNRELATED)
    near = similarity(original, edited)
    assert 0.85 <= near < 1.0  # the tool's default threshold
    assert similarity(original, unrelated) < 0.7
    assert similarity(edited, original) == near  # symmetric
    assert _unit(EDITED).normalized_hash != _unit(ORIGINAL).normalized_hash  # not a renamed clone


def test_member_names_are_kept_so_other_attributes_make_other_code() -> None:
    other_fields = ORIGINAL.replace(".price", ".cost").replace(".qty", ".count")
    assert _unit(other_fields).normalized_hash == _unit(ORIGINAL).normalized_hash  # renamed clone...
    assert similarity(_shingles(ORIGINAL), _shingles(other_fields)) < similarity(
        _shingles(ORIGINAL), _shingles(EDITED)
    )  # ...but a weaker near-miss than an edited copy that reaches the same fields


def test_repeated_grams_count_as_a_multiset() -> None:
    once = _shingles("def f(a):\n    a.x = g(a)\n    return a\n")
    twice = _shingles("def f(a):\n    a.x = g(a)\n    a.x = g(a)\n    a.x = g(a)\n    return a\n")
    assert twice.total > once.total
    assert overlap(once, twice) == pytest.approx(once.total / twice.total, abs=0.05)


def test_small_units_have_few_shingles_and_brace_languages_work() -> None:
    assert _shingles("def f(): pass\n").total == 3  # def ID ( ) : pass } -> three 5-grams
    js_a = _shingles("function add(a, b) { const s = a + b; log(s.total); return s * 2; }", "javascript")
    js_b = _shingles(
        "function plus(x, y) {\n  const t = x + y;\n  log(t.total);\n  return t * 3;\n}", "javascript"
    )
    assert similarity(js_a, js_b) == pytest.approx(1.0)
    assert K == 5


def test_large_units_keep_a_sketch_and_its_estimate_is_close() -> None:
    rng = random.Random(7)
    full_a = set(rng.sample(range(1, 2**32), 5000))
    shared = set(rng.sample(sorted(full_a), 3500))
    full_b = shared | set(rng.sample(range(1, 2**32), 1500))

    def sketch(full: set[int]) -> Shingles:
        return Shingles(len(full), frozenset(sorted(full)[:MAX_SHINGLES]))

    a, b = sketch(full_a), sketch(full_b)
    assert not a.complete and Shingles.decode(a.encode()) == a
    exact = len(full_a & full_b) / max(len(full_a), len(full_b))
    assert overlap(a, b) == pytest.approx(exact, abs=0.05)
    part = Shingles(200, frozenset(rng.sample(sorted(full_a), 200)))  # complete, and inside a
    assert part.complete and overlap(part, a) == pytest.approx(200 / 5000, abs=0.02)
