"""Query cues: evidence beyond the fused relevance that a question's own words give (pure, no I/O).

RRF relevance (``base``) says how well a memory's words and meaning match the question. Some
questions say more about their answer than their topic: *when* one asks for a time, *which
month* one names, *whose* words one asks about. Each cue is one ranking component in [0, 1],
``None`` when it does not apply (it then adds nothing, as for any unknown component):

* ``time``: 1.0 when the memory states a time (:func:`temporal.mentions_time`), else 0.0; None
  when the query does not ask *when*.
* ``date``: 1.0 when the memory's date, or a date its words point to ("last month"), falls in a
  month or year the query names, else 0.0; None when the query names none.
* ``speaker``: 1.0 when the query names the memory's ``metadata.speaker``, else 0.0; None when
  the memory has no speaker.

The query is read once (:meth:`QueryCues.of`); each candidate then costs a few regular
expression searches over its text, so the ranker scores its whole pool (~100-250 candidates)
in well under a millisecond.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from memory_service.core.search import temporal

SPEAKER_FIELD = "speaker"
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class QueryCues:
    """What a question says about its answer, read once per query."""

    asks_when: bool = False
    periods: tuple[temporal.Period, ...] = ()
    words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, query: str | None) -> QueryCues:
        if not query:
            return cls()
        return cls(
            asks_when=temporal.asks_when(query),
            periods=temporal.query_periods(query),
            words=words(query),
        )

    def components(
        self, text: str, metadata: Mapping[str, Any], written: datetime
    ) -> dict[str, float | None]:
        """The cue components of one memory: its text, metadata and creation time."""
        tokens = temporal.words(text) if self.asks_when or self.periods else []
        date = None
        if self.periods:
            day = temporal.memory_day(metadata, written)
            date = temporal.period_match(self.periods, [(day.year, day.month)])
            if not date:  # its own month is not asked: read what its words point to
                date = temporal.period_match(self.periods, temporal.event_periods(tokens, day))
        return {
            "time": (1.0 if temporal.mentions_time(tokens) else 0.0) if self.asks_when else None,
            "date": date,
            "speaker": speaker_named(self.words, metadata.get(SPEAKER_FIELD)),
        }


def speaker_named(query_words: AbstractSet[str], speaker: object) -> float | None:
    """1.0 when the question names the memory's speaker (a chat turn's author: "When did Caroline
    ...?" is most often answered by Caroline), else 0.0; None when the memory has no speaker.
    ``query_words``: the question's lower-case words (:func:`words`)."""
    if not isinstance(speaker, str):
        return None
    name = _name(speaker)
    if not name:
        return None
    return 1.0 if name <= query_words else 0.0


@lru_cache(maxsize=1024)
def _name(speaker: str) -> frozenset[str]:
    return words(speaker)  # a store holds few speakers: each is split once


def words(text: str) -> frozenset[str]:
    """The lower-case words of a text (stopwords kept: a name may be one)."""
    return frozenset(_WORD.findall(text.lower()))
