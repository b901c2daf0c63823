"""core/search/temporal.py: when-questions, named periods, memory dates and the months a memory speaks of."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory_service.core.search import temporal


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When did Caroline go to the LGBTQ support group?", True),
        ("  when is the release?", True),
        ("How long ago was Caroline's 18th birthday?", True),
        ("What year did John start surfing?", True),
        ("In which month did the outage happen?", True),
        ("Since when do we pin the mcp SDK?", True),
        ("What did Caroline research?", False),
        ("Why did we choose Qdrant?", False),
        ("Whenever the cache misses, what happens?", False),  # a word boundary, not a prefix
    ],
)
def test_asks_when(query: str, expected: bool) -> None:
    assert temporal.asks_when(query) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday and it was so powerful.", True),
        ("We deployed it last Friday", True),
        ("I painted that lake sunrise in 2022!", True),
        ("Been doing this for three years now", True),
        ("It was in JUNE", True),
        ("Thanks, that looks great!", False),
        ("Pottery, and long walks with Rex", False),
        ("the maydays of sundayschool", False),  # whole words only
        ("You may come along", False),  # "may" the verb
    ],
)
def test_mentions_time(text: str, expected: bool) -> None:
    assert temporal.mentions_time(temporal.words(text)) is expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did John attend with his colleagues in March 2023?", ((2023, 3),)),
        ("When did Melanie go camping in June?", ((None, 6),)),
        ("What happened in 2022?", ((2022, None),)),
        ("between August 11 and August 15, 2023", ((None, 8), (2023, 8))),
        ("What did she do in May?", ((None, 5),)),
        ("What happened on May 8th?", ((None, 5),)),
        ("What may break when we upgrade?", ()),  # the verb, not the month
        ("Does ES2020 support it, and v2023.1?", ()),  # years only as whole tokens
        ("What did Caroline research?", ()),
    ],
)
def test_query_periods(query: str, expected: tuple[temporal.Period, ...]) -> None:
    assert temporal.query_periods(query) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1:56 pm on 8 May, 2023", date(2023, 5, 8)),
        ("2023-05-08T13:56:00Z", date(2023, 5, 8)),
        ("May 8th, 2023", date(2023, 5, 8)),
        ("8 Smarch, 2023", None),
        ("31 February, 2023", None),
        ("yesterday", None),
    ],
)
def test_parse_date(value: str, expected: date | None) -> None:
    assert temporal.parse_date(value) == expected


def test_memory_day_prefers_metadata_dates_then_creation_time() -> None:
    written = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    assert temporal.memory_day({}, written) == date(2026, 11, 23)
    assert temporal.memory_day({"session_date": "1:56 pm on 8 May, 2023"}, written) == date(2023, 5, 8)
    both = {"session_date": "8 May, 2023", "event_date": "2023-04-30"}
    assert temporal.memory_day(both, written) == date(2023, 4, 30)
    assert temporal.memory_day({"date": "soon", "session_date": 5}, written) == date(2026, 11, 23)


def periods(text: str, day: date) -> set[temporal.Period]:
    return temporal.event_periods(temporal.words(text), day)


def test_event_periods_follow_relative_words_and_named_months() -> None:
    day = date(2023, 4, 18)
    assert periods("Thanks!", day) == {(2023, 4)}
    assert (2023, 3) in periods("We went to a convention last month.", day)
    assert (2022, None) in periods("I painted that last year", day)
    assert (2021, None) in periods("We met two years ago", day)
    assert (2023, 3) in periods("It was two weeks ago", date(2023, 4, 3))
    assert (2023, 3) in periods("a couple of days ago", date(2023, 4, 1))
    assert (2023, 1) in periods("that was 3 months ago", day)
    assert (2023, 3) in periods("It was great on Saturday", date(2023, 4, 3))  # the week before
    assert (2023, 5) in periods("See you next month", day)
    assert (2023, 3) in periods("I went there yesterday", date(2023, 4, 1))
    assert (2022, 12) in periods("back in December", day)  # the December before
    assert (2019, None) in periods("I've had them since 2019", day)
    assert periods("You may come, the last one was fine", day) == {(2023, 4)}


def test_period_match() -> None:
    spoken = periods("We went to a convention last month.", date(2023, 4, 18))
    assert temporal.period_match([(2023, 3)], spoken) == 1.0
    assert temporal.period_match([(None, 3)], spoken) == 1.0
    assert temporal.period_match([(2023, None)], spoken) == 1.0
    assert temporal.period_match([(2022, 3)], spoken) == 0.0
    assert temporal.period_match([(2023, 6), (2024, None)], spoken) == 0.0
    assert temporal.period_match([(2022, 5)], {(2022, None)}) == 0.0  # a year is not a month
