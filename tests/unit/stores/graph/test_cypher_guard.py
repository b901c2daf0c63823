"""The shared Cypher guard: identifiers, one statement, no writes in read-only user queries."""

from __future__ import annotations

import time

import pytest

from memory_service.core.errors import ValidationError
from memory_service.stores.graph.cypher_guard import TOKEN, guard_cypher, ident

NEO4J_CATALOG = frozenset({"db.labels", "db.relationshipTypes"})


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (n:Memory) RETURN n.set, n.merge",
        "MATCH (n:Create) WHERE n.name = 'DELETE me' RETURN n // SET in a comment",
        "MATCH (n) WHERE n.x = $merge RETURN {drop: 1} AS m;",
        "CALL db.labels() YIELD label RETURN label",
        "call DB.LABELS()",
        "MATCH (n) /* CREATE (x) */ RETURN n",
    ],
)
def test_reads_pass(cypher: str) -> None:
    guard_cypher(cypher, read_only=True, read_procedures=NEO4J_CATALOG)


@pytest.mark.parametrize(
    ("cypher", "code"),
    [
        ("MATCH (n) SET n.x = 1", "VAL_WRITE_NOT_ALLOWED"),
        ("MATCH (n) DETACH DELETE n", "VAL_WRITE_NOT_ALLOWED"),
        ("CALL apoc.periodic.iterate('x', 'y', {})", "VAL_WRITE_NOT_ALLOWED"),
        ("CALL db.labels", "VAL_WRITE_NOT_ALLOWED"),  # not a call without its parentheses
        ("MATCH (n) RETURN n; MATCH (m) RETURN m", "VAL_CYPHER"),
    ],
)
def test_writes_and_several_statements_are_refused(cypher: str, code: str) -> None:
    with pytest.raises(ValidationError) as info:
        guard_cypher(cypher, read_only=True, read_procedures=NEO4J_CATALOG)
    assert info.value.code == code


def test_writes_pass_when_allowed() -> None:
    guard_cypher("MERGE (n:Memory {id: $id}) SET n.name = $name", read_only=False)


def test_identifiers() -> None:
    assert ident("DEPENDS_ON", "relationship type") == "DEPENDS_ON"
    for bad in ("1bad", "a-b", "x" * 65, "", "a`b"):
        with pytest.raises(ValidationError) as info:
            ident(bad, "label")
        assert info.value.code == "VAL_GRAPH_IDENTIFIER"


def test_tokenising_is_linear_on_unterminated_comments_and_quotes() -> None:
    """``/\\*.*?\\*/`` retried from every ``/*`` was quadratic (seconds at 100k characters)."""
    for text in ("/*" * 50_000, "'" + "a" * 100_000, '"' * 100_000, "/* " + "*" * 100_000):
        started = time.perf_counter()
        for _ in TOKEN.finditer(text):
            pass
        assert time.perf_counter() - started < 1.0


def test_a_subquery_is_checked_inside() -> None:
    guard_cypher("CALL { MATCH (n) RETURN count(n) AS c } RETURN c", read_only=True)
    with pytest.raises(ValidationError) as refused:
        guard_cypher("MATCH (n) CALL { CREATE (:X) } RETURN n", read_only=True)
    assert refused.value.details == {"clause": "CREATE"}
    with pytest.raises(ValidationError) as refused:
        guard_cypher("CALL (n) { CREATE (:X) } RETURN 1", read_only=True)  # scoped form: refused as CALL
    assert refused.value.details == {"clause": "CALL"}
