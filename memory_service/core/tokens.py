"""How many tokens a text costs, estimated from above without a tokenizer (seed 001 §4.3's cap).

The cap is in tokens of whichever model reads the answer, so no one tokenizer is right. The
estimate is an upper bound for the tokenizer families in use, cheap enough for every answer
(a few C-level passes over the text, no model):

- a character outside ASCII costs its UTF-8 bytes: 2 for Cyrillic, Greek or accented Latin, 3 for
  Chinese, Japanese, Korean and most other scripts, 4 for an emoji (each code point of a ZWJ
  sequence or flag counts). A byte-level BPE (GPT, Claude, Llama 3) never makes more tokens than
  bytes, and a WordPiece (all-MiniLM) makes at most one a character, at most three for a Hangul
  syllable it splits into jamo;
- an ASCII word (lower case letters, with one capital in front: ``memory``, ``Search``, the parts
  of ``fitToBudget``) costs one token per two letters, rounded up;
- every other ASCII character (a digit, a capital outside a word, punctuation, a newline or tab)
  costs one, and so does each second space of a run; single spaces cost nothing.

English prose comes to about one token per two characters, an answer's JSON (ids, scores, dates)
to about two in three; both are above what all-MiniLM or an LLM tokenizer counts
(tests/unit/core/test_tokens.py checks it against the model's tokenizer). Strings of random lower
case letters are the known exception: all-MiniLM cuts them finer than two letters a token.
"""

from __future__ import annotations

import json
from typing import Any


def _classes() -> bytes:
    """A byte table: lower case letters to ``a``, capitals to ``A``, bytes outside ASCII to ``x``,
    everything else to a space."""
    table = bytearray(b" " * 256)
    for byte in range(ord("a"), ord("z") + 1):
        table[byte] = ord("a")
    for byte in range(ord("A"), ord("Z") + 1):
        table[byte] = ord("A")
    for byte in range(128, 256):
        table[byte] = ord("x")
    return bytes(table)


_CLASSES = _classes()


def estimate_tokens(text: str) -> int:
    """An upper estimate of the tokens in ``text`` (the rules above), from byte counts alone."""
    return (half_tokens(text) + 1) // 2


def half_tokens(text: str) -> int:
    """Twice the estimate before rounding: it adds up exactly over pieces of a text split at
    non-letters (a JSON string's quotes), which the response cap relies on."""
    if not text:
        return 0
    plain = text.isascii()  # a flag CPython keeps: no scan
    classes = text.encode("ascii" if plain else "utf-8", "surrogatepass").translate(_CLASSES)
    outside_ascii = 0 if plain else classes.count(b"x")
    capitals_in_words = classes.count(b"Aa")
    letters = classes.count(b"a") + capitals_in_words
    # a word starts at a lower case letter after anything but one, or at a capital before one
    words = classes.count(b" a") + capitals_in_words + classes.startswith(b"a")
    if not plain:
        words += classes.count(b"xa")
    spaces = text.count(" ")
    singles = len(classes) - outside_ascii - letters - spaces + text.count("  ")
    # a word of n letters costs ceil(n / 2) <= (n + 1) / 2
    return 2 * (outside_ascii + singles) + letters + words


def json_text(payload: Any) -> str:
    """The JSON text an answer is sent as (tools' text content)."""
    return json.dumps(payload, ensure_ascii=False, default=str)


def json_tokens(payload: Any) -> int:
    """The estimated tokens of ``payload``'s JSON text."""
    return estimate_tokens(json_text(payload))
