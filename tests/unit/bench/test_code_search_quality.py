"""bench/code_search_quality.py: the question file's shape and the scoring of one ranked list."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench.code_search_quality import DEFAULT_QUESTIONS, SPLITS, Scores, rank_of

SPEC = json.loads(DEFAULT_QUESTIONS.read_text(encoding="utf-8"))


def test_question_file_has_forty_questions_over_two_languages_split_in_halves() -> None:
    questions = SPEC["questions"]
    assert len(questions) >= 40
    libraries = SPEC["libraries"]
    assert len({lib["language"] for lib in libraries.values()}) >= 2
    per_library = Counter(q["library"] for q in questions)
    assert set(per_library) == set(libraries) and min(per_library.values()) >= 20
    for name in libraries:
        splits = Counter(q["split"] for q in questions if q["library"] == name)
        assert set(splits) == set(SPLITS) and abs(splits["dev"] - splits["held_out"]) <= 1
    assert len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert q["question"].strip() and q["expected"]
        assert all(e["name"] and e["file"] and not e["file"].startswith("/") for e in q["expected"])
    for lib in libraries.values():
        assert lib["client"] in ("pip", "npm") and lib["version"][0].isdigit()  # pinned


def _hit(name: str, file_path: str) -> dict[str, str]:
    return {"name": name.rsplit(".", 1)[-1], "qualified_name": name, "file_path": file_path}


def test_rank_is_that_of_the_first_expected_unit_matched_by_name_and_file() -> None:
    expected = [{"name": "Help.boxWrap", "file": "lib/help.js"}, {"name": "wrap", "file": "lib/help.js"}]
    results = [
        _hit("Help.boxWrap", "lib/other.js"),  # right name, wrong file
        _hit("Help.formatItem", "lib/help.js"),
        _hit("wrap", "lib/help.js"),
        _hit("Help.boxWrap", "lib/help.js"),
    ]
    assert rank_of(results, expected) == 3
    assert rank_of(results[:2], expected) is None


@pytest.mark.parametrize(
    ("ranks", "row"),
    [
        ([1, 2, 4, None], (4, 0.4375, 0.25, 0.5, 0.75)),
        ([None], (1, 0.0, 0.0, 0.0, 0.0)),
        ([10, 3], (2, 0.2167, 0.0, 0.5, 1.0)),
    ],
)
def test_scores_mrr_and_top_k(ranks: list[int | None], row: tuple[float, ...]) -> None:
    scores = Scores()
    for rank in ranks:
        scores.add(rank)
    cells = [float(c) for c in scores.row().split()]
    assert cells == pytest.approx(list(row), abs=1e-3)  # printed with 3 decimals
