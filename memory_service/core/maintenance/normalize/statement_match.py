"""Whether two texts that embed alike say the same thing (normalize_memory's near duplicates).

A sentence embedding scores a statement and its opposite as near twins: with all-MiniLM-L6-v2,
"The API must be idempotent." / "The API must not be idempotent." score 0.978, "Prefer tabs over
spaces." / "Prefer spaces over tabs." 0.976, "Retry failed payments automatically." / "...
manually." 0.967, above any cosine threshold that still catches rewordings. Merging those would
hide one of two contradicting memories, so a near duplicate must also pass a lexical check:

* both state the same numbers, when both state any ("limit is 100" vs "limit is 1000");
* the words they do not share include no negation or polarity word (not, never, no, without,
  must/should/may, allow/forbid, enable/disable...);
* their content words, crudely stemmed (number words as digits) and with function words dropped,
  are in the same order
  and at least 90 % alike (difflib's ratio): reformatting, articles, plurals and tense pass;
  swapped or replaced content words do not.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
MIN_RATIO = 0.9

# Dropped before comparing: they carry no statement of their own.
_FUNCTION_WORDS_TEXT = (
    "a an the this that these those is are was were be been being it its they them their there of to "
    "in on at by for from with as and or so then than which who whom whose what when where we you he "
    "she i our your his her my me us do does did have has had will would can could just also very "
    "really please using via "
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
# A difference in any of these flips or weakens what is said.
_POLARITY_TEXT = (
    "not no never none nothing nobody nowhere neither nor without cannot can't don't doesn't didn't "
    "won't wouldn't shouldn't mustn't isn't aren't wasn't weren't hasn't haven't must should shall "
    "may might always only except unless instead avoid avoids stop allow allowed allows forbid "
    "forbidden forbids prohibit prohibited deny denied disallow disallowed disable disabled enable "
    "enabled required optional mandatory true false yes before after above below more less fewer most "
    "least max min maximum minimum "
)
_POLARITY = frozenset(_POLARITY_TEXT.split())
_SUFFIXES = ("ing", "ed", "es", "s", "e")
_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}


def same_numbers(a: str, b: str) -> bool:
    """Both state the same numbers, or one states none ("three" vs "3" is left to the model)."""
    left, right = set(_NUMBER.findall(a)), set(_NUMBER.findall(b))
    return not (left and right) or left == right


def _stem(word: str) -> str:
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _FUNCTION_WORDS]


def same_statement(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (already close in embedding space) state the same thing."""
    if not same_numbers(a, b):
        return False
    words_a, words_b = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    if (words_a ^ words_b) & _POLARITY:
        return False
    left, right = _content(a), _content(b)
    if not left or not right:
        return left == right
    return SequenceMatcher(None, left, right, autojunk=False).ratio() >= MIN_RATIO
