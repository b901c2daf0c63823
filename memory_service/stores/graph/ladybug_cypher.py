"""The statements the LadybugDB graph store runs, as named constants (see ``ladybug``), and the
read-only check of users' Cypher with LadybugDB's catalog procedures.

Labels and relationship types are formatted in (plain identifiers, backtick-quoted); every value
is a ``$param``. Node and rel tables are created on first use (``ladybug_catalog``).
"""

from memory_service.stores.graph.cypher_guard import guard_cypher

CREATE_NODE_TABLE = (
    "CREATE NODE TABLE IF NOT EXISTS `{label}`(id STRING PRIMARY KEY, name STRING, type STRING, props STRING)"
)
CREATE_REL_TABLE = "CREATE REL TABLE IF NOT EXISTS `{type}`(FROM `{src}` TO `{dst}`, props STRING)"
ADD_REL_PAIR = "ALTER TABLE `{type}` ADD IF NOT EXISTS FROM `{src}` TO `{dst}`"
LIST_TABLES = "CALL show_tables() RETURN name, type"
LIST_PAIRS = "CALL show_connection('{type}') RETURN `source table name`, `destination table name`"
# Empty tables a read-only query binds to while the ones it names do not exist yet (rolled back).
CREATE_STAND_IN_REL = "CREATE REL TABLE `{type}`({pairs}, props STRING)"
STAND_IN_LABEL, STAND_IN_TYPE = "_NoNodeYet", "_NO_RELATIONSHIP_YET"
UPSERT_NODES = (
    "UNWIND $rows AS r MERGE (n:`{label}` {{id: r.id}}) "
    "SET n.name = r.name, n.type = r.type, n.props = r.props"
)
ENSURE_NODES = "UNWIND $ids AS i MERGE (n:`{label}` {{id: i}})"
# MERGE costs ~65 µs a node here, CREATE ~17: the ids already there are looked up first (~1.5 µs
# each) and only those are merged; a bulk add's new memories are created.
KNOWN_NODES = "UNWIND $ids AS i MATCH (n:`{label}`) WHERE n.id = i RETURN n.id"
CREATE_NODES = (
    "UNWIND $rows AS r CREATE (n:`{label}` {{id: r.id, name: r.name, type: r.type, props: r.props}})"
)
# WHERE a.id = r.a, not (a:T {id: r.a}): the pattern form is far slower inside UNWIND.
UPSERT_EDGES = (
    "UNWIND $rows AS r MATCH (a:`{src}`) WHERE a.id = r.a MATCH (b:`{dst}`) WHERE b.id = r.b "
    "MERGE (a)-[e:`{type}`]->(b) SET e.props = r.props"
)
EDGES_OUT = "MATCH (n:`{label}`)-[e]->(m) WHERE n.id = $id RETURN label(e), label(m), m.id, e.props"
EDGES_IN = "MATCH (n:`{label}`)<-[e]-(m) WHERE n.id = $id RETURN label(e), label(m), m.id, e.props"
# Edges between nodes of {label} (by id) and any node of {other}: one statement per direction.
EDGES_FROM_OTHER = (
    "MATCH (m:`{other}`)-[e]->(n:`{label}`) WHERE n.id IN $ids RETURN label(e), m.id, n.id, e.props, true"
)
EDGES_TO_OTHER = (
    "MATCH (m:`{other}`)<-[e]-(n:`{label}`) WHERE n.id IN $ids RETURN label(e), m.id, n.id, e.props, false"
)
# LadybugDB cannot DELETE an undirected match: one statement per direction.
DELETE_EDGES_OUT = "MATCH (n:`{label}`)-[e]->() WHERE n.id = $id DELETE e"
DELETE_EDGES_IN = "MATCH (n:`{label}`)<-[e]-() WHERE n.id = $id DELETE e"
DELETE_NODE = "MATCH (n:`{label}`) WHERE n.id = $id DETACH DELETE n"
COUNT_DETACHED = "MATCH (n:`{label}`)-[e]-() WHERE n.id IN $ids RETURN count(e)"
DELETE_NODES = "MATCH (n:`{label}`) WHERE n.id IN $ids DETACH DELETE n"
COUNT_EDGES = "MATCH ()-[e]->() RETURN label(e), count(*)"
IN_DEGREE = "MATCH ()-[e]->(m:`{label}`) WHERE m.id IN $ids AND NOT label(e) IN $skip RETURN m.id, count(e)"
NEIGHBOURS = "MATCH (m:`{label}`)-[]-(x:`{label}`) WHERE m.id IN $ids RETURN DISTINCT m.id, x.id"
COUNT_NODES = "MATCH (n) RETURN label(n), count(*)"
# SHORTEST: one shortest path per reached node, so cycles cannot blow up the walk count.
RELATED = (
    "MATCH (s:`{label}`) WHERE s.id = $id "
    "MATCH p = (s){left}-[{types}* SHORTEST 1..{depth}]-{right}(x) WHERE id(x) <> id(s) "
    "WITH x, length(p) AS d, rels(p) AS hops "
    "RETURN x.id, label(x), x.name, x.type, x.props, d, label(hops[d]), end_node(hops[d]) = id(x), "
    "list_transform(hops, r -> label(r)) "
    "ORDER BY d, label(x), x.id LIMIT $limit"
)
FIND_BY_ID = "MATCH (n:`{label}`) WHERE n.id = $key RETURN n.id, n.name, n.type, n.props LIMIT $limit"
FIND_BY_NAME = "MATCH (n:`{label}`) WHERE n.name = $key RETURN n.id, n.name, n.type, n.props LIMIT $limit"
NODE_IDS = "MATCH (n:`{label}`) RETURN n.id"
LIST_TABLE_IDS = "CALL show_tables() RETURN id, name"
# offset IN $list over one table: ~50 ms for 2k ids (an UNWIND of internal_id() lookups: ~1.4 s).
RESOLVE_OFFSETS = "MATCH (n:`{label}`) WHERE offset(id(n)) IN $offsets RETURN offset(id(n)), n.id"
BEGIN, BEGIN_READ_ONLY = "BEGIN TRANSACTION", "BEGIN TRANSACTION READ ONLY"
COMMIT, ROLLBACK = "COMMIT", "ROLLBACK"
PING = "RETURN 1"
CHECKPOINT = "CHECKPOINT"

# LadybugDB's catalog procedures a read-only query may CALL.
READ_PROCEDURES = frozenset({
    "show_tables", "show_connection", "table_info", "show_functions", "show_indexes",
    "show_sequences", "current_setting", "db_version", "show_warnings",
})  # fmt: skip


def check_cypher(cypher: str, *, read_only: bool) -> None:
    """The shared guard (stores/graph/cypher_guard.py) with LadybugDB's read-only procedures."""
    guard_cypher(cypher, read_only=read_only, read_procedures=READ_PROCEDURES)
