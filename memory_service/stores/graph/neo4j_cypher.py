"""The statements the Neo4j graph store runs, as named constants (see ``neo4j``), and the
read-only check of users' Cypher with Neo4j's catalog procedures.

Labels and relationship types are formatted in (plain identifiers, backtick-quoted); every value
is a ``$param``. Every statement takes ``$namespace``: a node is looked up by label, ``ns`` and
``id``; a lookup by label and ``ns`` alone adds ``id IS NOT NULL``, so that it still seeks the
``(ns, id)`` index (checked with EXPLAIN on 5.26: without it, a label scan).
"""

from memory_service.core.errors import ValidationError
from memory_service.stores.graph.cypher_guard import TOKEN, guard_cypher

CREATE_CONSTRAINT = (
    "CREATE CONSTRAINT `{label}_ns_id` IF NOT EXISTS FOR (n:`{label}`) REQUIRE (n.ns, n.id) IS UNIQUE"
)
# The constraint a store without namespaces created on a label: exactly this name and shape.
LEGACY_CONSTRAINTS = (
    "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes AS l, properties AS p "
    "WHERE name IN $names AND name = l[0] + '_id' AND size(l) = 1 AND p = ['id'] "
    "AND entityType = 'NODE' AND type IN ['UNIQUENESS', 'NODE_PROPERTY_UNIQUENESS'] RETURN name"
)
DROP_CONSTRAINT = "DROP CONSTRAINT `{name}` IF EXISTS"
UPSERT_NODES = (
    "UNWIND $rows AS r MERGE (n:`{label}` {{ns: $namespace, id: r.id}}) "
    "SET n.name = r.name, n.type = r.type, n.props = r.props"
)
UPSERT_EDGES = (
    "UNWIND $rows AS r MERGE (a:`{src}` {{ns: $namespace, id: r.a}}) "
    "MERGE (b:`{dst}` {{ns: $namespace, id: r.b}}) MERGE (a)-[e:`{type}`]->(b) SET e.props = r.props"
)
EDGES_OF = (
    "MATCH (n:`{label}` {{ns: $namespace, id: $id}})-[e]-(m) RETURN type(e) AS type, "
    "startNode(e) = n AS out, head(labels(m)) AS label, m.id AS id, e.props AS props"
)
EDGES_BETWEEN = (
    "MATCH (n:`{label}`) WHERE n.ns = $namespace AND n.id IN $ids MATCH (n)-[e]-(m:`{other}`) "
    "WHERE m.ns = $namespace RETURN DISTINCT type(e) AS type, startNode(e) = n AS out, m.id AS other, "
    "n.id AS id, e.props AS props"
)
DELETE_EDGES_OF = "MATCH (n:`{label}` {{ns: $namespace, id: $id}})-[e]-() DELETE e"
DELETE_NODE = (
    "MATCH (n:`{label}` {{ns: $namespace, id: $id}}) OPTIONAL MATCH (n)-[e]-() "
    "WITH n, count(DISTINCT e) AS removed DETACH DELETE n RETURN removed"
)
# Degrees are summed before anything is deleted: an edge between two deleted nodes counts twice,
# a self-loop too (as LadybugDB counts them).
DELETE_NODES = (
    "MATCH (n:`{label}`) WHERE n.ns = $namespace AND n.id IN $ids "
    "WITH collect(n) AS ns, sum(COUNT {{ (n)-->() }} + COUNT {{ (n)<--() }}) AS removed "
    "FOREACH (x IN ns | DETACH DELETE x) RETURN removed"
)
START = "MATCH (s:`{label}` {{ns: $namespace, id: $id}}) RETURN elementId(s) AS eid"
HOP = (
    "UNWIND $frontier AS f MATCH (a) WHERE elementId(a) = f MATCH (a){left}-[e{types}]-{right}(b) "
    "WHERE NOT elementId(b) IN $seen RETURN f AS src, elementId(b) AS eid, b.id AS id, "
    "head(labels(b)) AS label, b.name AS name, b.type AS type, b.props AS props, type(e) AS rel, "
    "endNode(e) = b AS forward"
)  # the frontier starts at START, in the namespace
FIND_BY_ID = (
    "MATCH (n:`{label}` {{ns: $namespace, id: $key}}) RETURN n.id AS id, n.name AS name, n.type AS type, "
    "n.props AS props LIMIT $limit"
)
NODE_IDS = "MATCH (n:`{label}`) WHERE n.ns = $namespace AND n.id IS NOT NULL RETURN n.id AS id"
FIND_BY_NAME = (  # a scan of the namespace's nodes of one label: name is not indexed
    "MATCH (n:`{label}`) WHERE n.ns = $namespace AND n.id IS NOT NULL AND n.name = $key "
    "RETURN n.id AS id, n.name AS name, n.type AS type, n.props AS props LIMIT $limit"
)
IN_DEGREE = (
    "MATCH (m:`{label}`) WHERE m.ns = $namespace AND m.id IN $ids MATCH ()-[e]->(m) "
    "WHERE NOT type(e) IN $skip RETURN m.id AS id, count(e) AS n"
)
NEIGHBOURS = (
    "MATCH (m:`{label}`)--(x:`{label}`) WHERE m.ns = $namespace AND m.id IN $ids "
    "RETURN m.id AS a, collect(DISTINCT x.id) AS b"
)
LABELS = "CALL db.labels() YIELD label RETURN label AS name"  # every namespace's: counts filter
# One count per label, of the namespace's nodes (an index seek), or of the edges leaving them.
COUNT_LABEL = (
    "MATCH (n:`{name}`) WHERE n.ns = $namespace AND n.id IS NOT NULL RETURN $k{i} AS name, count(n) AS n"
)
COUNT_TYPES = (
    "MATCH (n:`{name}`) WHERE n.ns = $namespace AND n.id IS NOT NULL MATCH (n)-[e]->() "
    "RETURN type(e) AS name, count(e) AS n"
)
PING = "RETURN 1"

# Catalog procedures a read-only query may CALL (any other CALL is refused before running).
READ_PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.schema.visualization",
    "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
})  # fmt: skip
_ADMIN_WORDS = frozenset({"TERMINATE"})  # allowed in a READ transaction, but not a read


def check_cypher(cypher: str, *, read_only: bool) -> None:
    """The shared guard with Neo4j's catalog procedures, and ``TERMINATE`` refused when read-only."""
    guard_cypher(cypher, read_only=read_only, read_procedures=READ_PROCEDURES)
    toks = [(m.lastgroup, m.group()) for m in TOKEN.finditer(cypher) if m.lastgroup != "skip"]
    for i, (kind, text) in enumerate(toks):
        prev, nxt = toks[i - 1][1] if i else "", toks[i + 1][1] if i + 1 < len(toks) else ""
        word = text.upper() if kind == "word" and prev not in (".", ":", "$") and nxt != ":" else ""
        if read_only and word in _ADMIN_WORDS:
            raise ValidationError(
                f"{word} is not allowed in a read-only graph query", code="VAL_WRITE_NOT_ALLOWED",
                details={"clause": word}, suggestion="Use MATCH ... RETURN only.",
            )  # fmt: skip
