"""What a code unit looks like, read from its indexed signature: parameters, decorators, bases, naming.

The code index keeps a unit's header as text (``@cache def get(self, key: str) -> int``,
``export class Store extends Base implements Repo``), so these are lexical reads of that header,
the same for every language the indexer parses.
"""

from __future__ import annotations

import re

SELF_NAMES = frozenset({"self", "cls", "this"})
SNAKE = re.compile(r"^_*[a-z][a-z0-9]*(_[a-z0-9]+)*_*$")
CAMEL = re.compile(r"^_*[a-z][a-zA-Z0-9]*$")
PASCAL = re.compile(r"^_*[A-Z][a-zA-Z0-9]*$")
SNAKE_LANGUAGES = frozenset({"python", "rust", "ruby"})
_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-\s]+")


def member_key(qualified_name: str) -> str:
    """A member's name inside its class (``Store.get`` -> ``get``), or a function's name."""
    return qualified_name.rsplit(".", 1)[-1]


def normalized(name: str) -> str:
    """Case- and style-free form: ``getItem``, ``get_item`` and ``GetItem`` all give ``getitem``."""
    return "".join(part.lower() for part in _WORD_BREAK.split(name) if part)


def parameters(signature: str) -> list[str]:
    """Parameter names of a function header, without ``self``/``cls``/``this``."""
    start = signature.find("(")
    if start < 0:
        return []
    depth, end = 0, len(signature)
    for i in range(start, len(signature)):
        depth += {"(": 1, "[": 1, "{": 1, "<": 1, ")": -1, "]": -1, "}": -1, ">": -1}.get(signature[i], 0)
        if depth == 0:
            end = i
            break
    names = []
    for part in _split_top(signature[start + 1 : end]):
        name = re.split(r"[:=?]", part.strip(), maxsplit=1)[0].strip().lstrip("*.").strip()
        name = name.split()[-1] if name else name  # TS modifiers: `private readonly x`
        if name and name not in SELF_NAMES and name != "/":
            names.append(name)
    return names


def decorators(signature: str) -> list[str]:
    """Decorator names written before the header (``@staticmethod @functools.cache def f``)."""
    found = []
    for token in signature.split():
        if not token.startswith("@"):
            break
        found.append(token[1:].split("(", 1)[0])
    return sorted(set(found))


def bases(signature: str) -> list[str]:
    """Base classes and interfaces named in a class header."""
    match = re.search(r"\bclass\s+\w+\s*\(([^)]*)\)", signature)
    if match:
        parts = [p.strip() for p in _split_top(match.group(1))]
        return sorted({p for p in parts if p and "=" not in p})
    found: set[str] = set()
    for clause in re.findall(r"\b(?:extends|implements)\s+([\w.,\s<>]+?)(?=\bimplements\b|\{|$)", signature):
        found |= {re.sub(r"<.*", "", p).strip() for p in clause.split(",") if p.strip()}
    return sorted(found)


def naming_rule(kind: str, language: str) -> tuple[str, re.Pattern[str]] | None:
    """The convention a unit's name should follow in its language, if there is a clear one."""
    if kind in ("class", "interface", "struct", "enum", "trait"):
        return "PascalCase", PASCAL
    if language in SNAKE_LANGUAGES:
        return "snake_case", SNAKE
    if language in ("typescript", "javascript", "tsx", "java", "kotlin"):
        return "camelCase", CAMEL
    return None


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return parts
