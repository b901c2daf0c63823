"""What every graph adapter checks before running Cypher (identifiers, users' read-only queries),
and the errors both give for a query the engine refuses.

Labels and relationship types are interpolated into statements (Cypher cannot take them as
parameters), so they must be plain identifiers, and are backtick-quoted as well. A user's query
(graph_query) may not write when read-only: it is tokenised, so words inside string literals,
`quoted names` and comments do not count, nor do property names, labels, parameters or map keys
(``n.set``, ``:Create``, ``$merge``, ``{drop: 1}``). Each engine then enforces read-only again in
its own way (a READ ONLY transaction, a read access mode).

The token pattern is linear on any input: an unterminated comment runs to the end of the text in
one step instead of being retried from every ``/*``.
"""

from __future__ import annotations

import re

from memory_service.core.errors import ValidationError

IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
WRITE_WORDS = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "COPY", "INSTALL",
    "UNINSTALL", "LOAD", "ATTACH", "USE", "IMPORT", "EXPORT", "CHECKPOINT", "BEGIN", "COMMIT",
    "ROLLBACK", "FOREACH", "NEXTVAL",
})  # fmt: skip
TOKEN = re.compile(
    r"""(?P<skip>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z)|\s+)"""
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>.)",
    re.S,
)


def ident(name: str, what: str) -> str:
    """``name`` if it is a plain identifier (a letter, then letters, digits, underscores; ≤ 64)."""
    if not isinstance(name, str) or not IDENT.match(name):
        raise ValidationError(
            f"Invalid graph {what} {name!r}", code="VAL_GRAPH_IDENTIFIER",
            details={"field": what, "provided": name, "pattern": IDENT.pattern},
            suggestion="Use a letter then letters, digits or underscores (max 64), e.g. DEPENDS_ON.",
        )  # fmt: skip
    return name


def guard_cypher(cypher: str, *, read_only: bool, read_procedures: frozenset[str] = frozenset()) -> None:
    """Refuse several statements, and write clauses when ``read_only``, before anything runs.

    ``CALL`` is allowed in a read-only query only for one of ``read_procedures`` (the engine's
    catalog procedures, compared case-insensitively, dotted names included), or to open a
    ``CALL { ... }`` subquery, whose clauses are checked as the rest are.
    """
    toks = [(m.lastgroup, m.group()) for m in TOKEN.finditer(cypher) if m.lastgroup != "skip"]
    semis = [i for i, (_, text) in enumerate(toks) if text == ";"]
    if semis and semis != [len(toks) - 1]:
        raise ValidationError("Only one Cypher statement per call", code="VAL_CYPHER",
                              suggestion="Send the statements one at a time.")  # fmt: skip
    allowed = {p.lower() for p in read_procedures}
    for i, (kind, text) in enumerate(toks):
        prev, nxt = toks[i - 1][1] if i else "", toks[i + 1][1] if i + 1 < len(toks) else ""
        if not read_only or kind != "word" or prev in (".", ":", "$") or nxt == ":":
            continue
        word = text.upper()
        # CALL { ... } is a subquery: its own words are checked here like the rest.
        if word in WRITE_WORDS or (word == "CALL" and nxt != "{" and _procedure(toks, i + 1) not in allowed):
            raise ValidationError(
                f"Write clause {word} is not allowed in a read-only graph query",
                code="VAL_WRITE_NOT_ALLOWED", details={"clause": word},
                suggestion="Use MATCH ... RETURN (CALL only for catalog procedures such as show_tables()); "
                "change the graph through the memory tools.",
            )  # fmt: skip


def _procedure(toks: list[tuple[str | None, str]], start: int) -> str | None:
    """The dotted procedure name called at ``start`` (``db.labels``), if a ``(`` follows it."""
    parts: list[str] = []
    i = start
    while i < len(toks) and toks[i][0] == "word":
        parts.append(toks[i][1])
        if i + 1 < len(toks) and toks[i + 1][1] == ".":
            i += 2
            continue
        break
    follows = toks[i + 1][1] if i + 1 < len(toks) else ""
    return ".".join(parts).lower() if parts and follows == "(" else None


def unbindable_params(exc: Exception) -> ValidationError:
    """The engine refused the query's parameters (a type it cannot bind, a number out of range)."""
    return ValidationError(
        f"Invalid Cypher parameters: {exc}",
        code="VAL_CYPHER",
        details={"field": "params", "engine": str(exc)},
        suggestion="Give params only strings, booleans, 64-bit integers, finite numbers, and lists "
        "of one such type (or objects of them); compare like with like.",
    )


def write_refused(engine: str) -> ValidationError:
    """The engine refused a write in a read-only query (one the lexical check let through)."""
    return ValidationError("Write clauses are not allowed in a read-only graph query",
                           code="VAL_WRITE_NOT_ALLOWED", details={"engine": engine},
                           suggestion="Use MATCH ... RETURN only.")  # fmt: skip


def timed_out(engine: str) -> ValidationError:
    """The engine stopped a query at its timeout."""
    return ValidationError("Graph query timed out", code="VAL_QUERY_TIMEOUT", details={"engine": engine},
                           suggestion="Add a LIMIT, narrow the MATCH or use fewer hops.")  # fmt: skip
