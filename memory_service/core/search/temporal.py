"""Time in questions and memories: the ``time`` and ``date`` ranking components (pure, no I/O).

Two cheap signals for questions about *when* (LoCoMo's temporal questions lagged most):

* A question that asks for a time ("When did Caroline go to the support group?", "How long
  ago ...", "What year ...") is answered by a memory that states one: "I went to a support group
  *yesterday*", "... *last week*", "... in *2022*". :func:`asks_when` and :func:`mentions_time`.
* A question that names a period ("What did John attend *in March 2023*?") favours memories dated
  in it. A memory's date is its ``metadata.event_date`` / ``date`` / ``session_date`` when one
  parses (a conversation's turns carry the session's date), else the day it was written; relative
  words in its text move it ("went to a convention *last month*" in April counts for March).
  :func:`query_periods`, :func:`memory_day` and :func:`period_match`.

Periods are ``(year, month)`` pairs, either part ``None`` when not said ("in June": any year;
"in 2022": any month). Questions are read with regular expressions, once per query; a memory's
text is split into words once (:func:`words`) and read by set and dictionary look-ups, a few
microseconds per candidate (a regular-expression alternation over the text cost three times as
much); date strings are parsed once per distinct string (:func:`parse_date` is cached).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

Period = tuple[int | None, int | None]

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_NUMBER = {name: i for i, name in enumerate(MONTHS, start=1)} | {
    name[:3]: i for i, name in enumerate(MONTHS, start=1)
}
_MONTH_NAMES = "|".join(MONTHS)
_YEAR = r"(?:19|20)\d\d"
# Metadata fields holding the date a memory's events happened on, in order of preference.
DATE_FIELDS = ("event_date", "date", "session_date")

_ASKS_WHEN = re.compile(
    r"^\W*(?:when|since when|what (?:year|month|date|day|time)|which (?:year|month|day|date)|"
    r"in (?:what|which) (?:year|month)|how long|how many (?:years|months|weeks|days))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_WEEKDAYS = frozenset(f"{d}day" for d in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun"))
# Months a text may name; "may" is left out: in a memory's text it is nearly always the verb.
_TEXT_MONTHS = {m: i for i, m in enumerate(MONTHS, start=1) if m != "may"}
_YEARS = frozenset(str(year) for year in range(1900, 2100))
# Words that state a time.
_TIME_WORDS = frozenset(
    (
        *("yesterday", "today", "tonight", "tomorrow", "ago", "recently", "since"),
        *("day", "days", "night", "nights", "morning", "mornings", "week", "weeks", "weekend"),
        *("weekends", "month", "months", "year", "years", "summer", "winter", "spring", "autumn"),
        *_WEEKDAYS,
        *_TEXT_MONTHS,
        *_YEARS,
    )
)
# How far a unit moves a date: (days, months, years) for one of it.
_UNITS = {
    "night": (1, 0, 0),
    "day": (1, 0, 0),
    "days": (1, 0, 0),
    "week": (7, 0, 0),
    "weeks": (7, 0, 0),
    "weekend": (7, 0, 0),
    "month": (0, 1, 0),
    "months": (0, 1, 0),
    "year": (0, 0, 1),
    "years": (0, 0, 1),
}
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "couple": 2, "three": 3, "few": 3, "several": 3, "four": 4}
# "June", "June 2023", "June, 2023", "June 15th, 2023"; "may" alone is usually the verb, so it
# needs a day, a year or a preposition ("in May") to count.
_QUERY_MONTH = re.compile(
    rf"\b(?:(in|of|during|since|early|late|mid) )?({_MONTH_NAMES})(?: (\d{{1,2}})(?:st|nd|rd|th)?)?"
    rf"(?:,? ({_YEAR}))?\b",
    re.IGNORECASE,
)
_QUERY_YEAR = re.compile(rf"(?<![\w.-])({_YEAR})(?![\w.-])")
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})(?:st|nd|rd|th)? ([A-Za-z]+),? (\d{4})")
_MONTH_DAY_YEAR = re.compile(r"([A-Za-z]+) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})")
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def asks_when(query: str) -> bool:
    """Whether the question asks for a time or a duration ("When did ...", "How long ago ...")."""
    return bool(_ASKS_WHEN.search(query))


def words(text: str) -> list[str]:
    """The lower-case words of a memory's text, in order: what :func:`mentions_time` and
    :func:`event_periods` read (one split per memory serves both)."""
    return _WORD.findall(text.lower())


def mentions_time(tokens: Sequence[str]) -> bool:
    """Whether a text (its :func:`words`) states a time: a day or month name, a year,
    "yesterday", "last week", "three years ago", "since"... (what answers a *when* question)."""
    return not _TIME_WORDS.isdisjoint(tokens)


def query_periods(query: str) -> tuple[Period, ...]:
    """The months and years a question names: "in March 2023" -> ((2023, 3),), "in June" ->
    ((None, 6),), "in 2022" -> ((2022, None),). Empty when it names none."""
    periods: list[Period] = []
    for match in _QUERY_MONTH.finditer(query):
        preposition, name, day, year = match.groups()
        if name.lower() == "may" and not (year or day or preposition):
            continue  # "What may ..." is not a month
        periods.append((int(year) if year else None, _MONTH_NUMBER[name.lower()]))
    named_years = {year for year, _ in periods}
    for year in dict.fromkeys(int(y) for y in _QUERY_YEAR.findall(query)):
        if year not in named_years:
            periods.append((year, None))
    return tuple(dict.fromkeys(periods))


@lru_cache(maxsize=4096)
def parse_date(value: str) -> date | None:
    """A day from a date string: ISO ("2023-05-08", "2023-05-08T13:56:00Z"), "8 May, 2023" (also
    inside "1:56 pm on 8 May, 2023", LoCoMo's session dates) or "May 8, 2023"; None otherwise."""
    if match := _ISO_DAY.search(value):
        return _day(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    if match := _DAY_MONTH_YEAR.search(value):
        return _day(int(match.group(3)), _MONTH_NUMBER.get(match.group(2).lower()), int(match.group(1)))
    if match := _MONTH_DAY_YEAR.search(value):
        return _day(int(match.group(3)), _MONTH_NUMBER.get(match.group(1).lower()), int(match.group(2)))
    return None


def memory_day(metadata: Mapping[str, Any], written: datetime) -> date:
    """The day a memory's events happened: the first of :data:`DATE_FIELDS` that parses, else
    the day it was written."""
    for name in DATE_FIELDS:
        value = metadata.get(name)
        if isinstance(value, str) and (day := parse_date(value)) is not None:
            return day
    return written.date()


def event_periods(tokens: Sequence[str], day: date) -> set[Period]:
    """The months a memory dated ``day`` speaks of, from its :func:`words`: that month; the months
    its relative words point to ("yesterday", "last week", "last month", "three weeks ago", "next
    month", a weekday: the week before; "last year", "two years ago": that year, any month); the
    months it names (the latest one not after ``day``) and the years it names."""
    periods: set[Period] = {(day.year, day.month)}
    for i, token in enumerate(tokens):
        shift: tuple[int, int, int] | None = None
        if token in _TEXT_MONTHS:
            month = _TEXT_MONTHS[token]
            periods.add((day.year if month <= day.month else day.year - 1, month))
        elif token in _YEARS:
            periods.add((int(token), None))
        elif token == "yesterday":
            shift = (-1, 0, 0)
        elif token == "tomorrow":
            shift = (1, 0, 0)
        elif token in _WEEKDAYS:
            shift = (-7, 0, 0)
        elif token in ("last", "next") and i + 1 < len(tokens) and tokens[i + 1] in _UNITS:
            sign = -1 if token == "last" else 1
            shift = _scaled(_UNITS[tokens[i + 1]], sign)
        elif token == "ago" and i >= 1 and tokens[i - 1] in _UNITS:
            shift = _scaled(_UNITS[tokens[i - 1]], -_count(tokens[max(i - 3, 0) : i - 1]))
        if shift is not None:
            days, months, years = shift
            if years:
                periods.add((day.year + years, None))
            else:
                moved = _add_months(day + timedelta(days=days), months)
                periods.add((moved.year, moved.month))
    return periods


def period_match(asked: Iterable[Period], spoken: Iterable[Period]) -> float:
    """1.0 when a period the question names holds one the memory speaks of, else 0.0. A year the
    memory only knows as a year ("last year") matches a question naming that year, not a month."""
    spoken = list(spoken)
    for year, month in asked:
        for s_year, s_month in spoken:
            if (year is None or year == s_year) and (month is None or month == s_month):
                return 1.0
    return 0.0


def _count(before: Sequence[str]) -> int:
    """How many units the words before one say: "three" (weeks ago), "a couple of", "5"; 1 when
    they say nothing countable."""
    for token in reversed(before):
        if token.isdigit():
            return min(int(token), 100)
        if token in _COUNTS:
            return _COUNTS[token]
    return 1


def _scaled(unit: tuple[int, int, int], by: int) -> tuple[int, int, int]:
    return (unit[0] * by, unit[1] * by, unit[2] * by)


def _day(year: int, month: int | None, day: int) -> date | None:
    if month is None:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)
