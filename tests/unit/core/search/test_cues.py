"""core/search/cues.py: the query cue components (time, date, speaker) and their scoring."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_service.core.search import scoring as ranking
from memory_service.core.search.cues import QueryCues, speaker_named, words
from memory_service.settings import RANKING_PROFILES

WRITTEN = datetime(2026, 11, 23, tzinfo=UTC)
TURN = {"speaker": "Caroline", "session_date": "1:56 pm on 8 May, 2023"}


def test_a_plain_query_has_no_time_or_date_cue() -> None:
    cues = QueryCues.of("What does Caroline research?")
    parts = cues.components("Caroline: I went there yesterday", TURN, WRITTEN)
    assert parts["time"] is None and parts["date"] is None
    assert parts["speaker"] == 1.0


def test_a_when_question_favours_memories_that_state_a_time() -> None:
    cues = QueryCues.of("When did Caroline go to the support group?")
    assert cues.components("Caroline: I went to a support group yesterday", TURN, WRITTEN)["time"] == 1.0
    assert cues.components("Caroline: the support group was so powerful", TURN, WRITTEN)["time"] == 0.0


def test_a_named_month_matches_the_memory_date_or_what_its_words_point_to() -> None:
    cues = QueryCues.of("What did Caroline do in April 2023?")
    assert cues.components("Caroline: a quiet week", TURN, WRITTEN)["date"] == 0.0  # May 2023
    assert cues.components("Caroline: last month I hiked", TURN, WRITTEN)["date"] == 1.0
    undated = cues.components("Caroline: last month I hiked", {}, WRITTEN)  # written Nov 2026
    assert undated["date"] == 0.0


def test_speaker_named() -> None:
    asked = words("When did Caroline and Mel meet?")
    assert speaker_named(asked, "Caroline") == 1.0
    assert speaker_named(asked, "Melanie") == 0.0
    assert speaker_named(asked, "Mel Gibson") == 0.0  # every part of the name
    assert speaker_named(asked, None) is None
    assert speaker_named(asked, "  ") is None
    assert speaker_named(asked, 42) is None


def test_cues_are_components_that_weigh_in_the_default_profile_only() -> None:
    parts = {"base": 0.5, "time": 1.0, "date": None, "speaker": 0.0}
    default = ranking.score(parts, RANKING_PROFILES["default"])
    assert {"time", "date", "speaker"} <= set(default.components)
    assert default.components["date"] is None
    weights = RANKING_PROFILES["default"]
    assert default.total == pytest.approx(0.5 * weights.base + weights.time)
    exact = ranking.score(parts, RANKING_PROFILES["seed004"])
    assert exact.total == pytest.approx(0.5 * 0.4)  # seed 004's formula has no cues
