"""trace_requirements: from a requirement to what implements, documents and tests it.

Evidence, all read through the ports:

* edges into the requirement memory (written at write time by :mod:`.linking`, or explicitly):
  IMPLEMENTS / SATISFIES from design memories (design documents), from other memories and from
  code nodes (implementations); TESTS from test_history memories (tests);
* TESTS / IMPLEMENTS edges from code units whose docstring, signature or name names the
  requirement id, written by the indexer (:mod:`.index_links`);
* code whose docstring or signature names the requirement id (found with the code index's
  lexical vectors, then checked for the exact id), for code indexed before the requirement
  existed: test functions (a name starting with ``test`` or a path with a ``test`` directory or
  prefix) become tests, the rest implementations. A unit found both ways is counted once.

A test's status is that of its latest test_history memory (``metadata.status``); a test with no
history is ``unknown``. Scores: an implementation in the code index (or a component memory that
CONTAINS code) counts 1.0, a memory's claim alone 0.5; coverage.implementation is the best of
them, coverage.testing the share of tests that passed; completeness = 0.4 implementation +
0.4 testing + 0.2 when a design document exists. ``basis`` spells out what was counted.
"""

from __future__ import annotations

from memory_service.core.code.links import is_test_unit
from memory_service.core.code.records import CODE_COLLECTIONS
from memory_service.core.graph.down import needs_graph
from memory_service.core.graph.lookup import excerpt, find_requirement, load_records
from memory_service.core.graph.trace_schemas import (
    Coverage,
    DesignDocument,
    Implementation,
    RequirementRef,
    TestItem,
    TraceRequirementsInput,
    TraceRequirementsOutput,
)
from memory_service.core.models import MemoryRecord, MemoryType
from memory_service.core.ports import GraphStore, PayloadFilter, SparseEncoder, VectorStore
from memory_service.core.records import MEMORIES, MEMORY_LABEL, from_payload

TRACE_EDGES = ("IMPLEMENTS", "SATISFIES", "TESTS")
CODE_HITS = 50
WEIGHTS = {"implementation": 0.4, "testing": 0.4, "design": 0.2}


class TraceService:
    def __init__(self, vectors: VectorStore, graph: GraphStore, sparse: SparseEncoder) -> None:
        self._vectors = vectors
        self._graph = graph
        self._sparse = sparse

    @needs_graph("trace_requirements")
    def trace(self, request: TraceRequirementsInput) -> TraceRequirementsOutput:
        """Raises: NotFoundError (NF_REQUIREMENT) when no requirement has that id."""
        req = find_requirement(self._vectors, request.requirement_id)
        rid = str(req.metadata.get("requirement_id") or "") or None
        linked = self._graph.related(MEMORY_LABEL, req.id, TRACE_EDGES, "INCOMING", 1, limit=500)
        memories = load_records(self._vectors, [e.id for e in linked if e.label == MEMORY_LABEL])
        impls: dict[str, Implementation] = {}
        designs: list[DesignDocument] = []
        history: list[MemoryRecord] = []
        code_tests: dict[str, dict] = {}
        for e in linked:
            if e.label != MEMORY_LABEL and e.relationship == "TESTS":  # a test unit (services.index_links)
                code_tests[e.id] = _unit_of(e.id, e.name, e.properties.get("file_path"))
                continue
            if e.label != MEMORY_LABEL:
                impls[e.id] = _code_impl(e.id, e.label, e.name, e.properties.get("file_path"), e.relationship)
                continue
            m = memories.get(e.id)
            if m is None:
                continue
            if e.relationship == "TESTS" or m.type == MemoryType.TEST_HISTORY:
                history.append(m)
            elif m.type == MemoryType.DESIGN:
                designs.append(design_document(m))
            else:
                impls[m.id] = self._memory_impl(m, e.relationship)
        tests: dict[str, TestItem] = {}
        for m in sorted(history, key=lambda m: (m.created_at, m.id)):  # the latest status wins
            tests[_test_name(m).lower()] = _test_item(m)
        for unit in self._code_naming(rid):  # also code indexed before the requirement existed
            if is_test_unit(str(unit.get("name", "")), str(unit.get("file_path", ""))):
                code_tests.setdefault(unit["unit_id"], unit)
            elif unit["unit_id"] not in impls:
                impls[unit["unit_id"]] = _code_impl(
                    unit["unit_id"], _label(unit), unit["qualified_name"], unit["file_path"], "NAMES"
                )
        if code_tests:
            self._add_code_tests(list(code_tests.values()), tests)
        return _report(req, list(impls.values()), designs, list(tests.values()))

    def _memory_impl(self, m: MemoryRecord, relationship: str) -> Implementation:
        code = []
        if m.type == MemoryType.COMPONENT:
            code = self._graph.related(MEMORY_LABEL, m.id, ["CONTAINS"], "OUTGOING", 1, limit=20)
        path = m.metadata.get("file_path") or next((c.id for c in code if c.label == "File"), None)
        return Implementation(
            component_id=m.id,
            name=m.title,
            file_path=path if isinstance(path, str) else None,
            completeness=1.0 if code else 0.5,
            kind=m.type,
            relationship=relationship,
        )

    def _code_naming(self, rid: str | None) -> list[dict]:
        """Code units whose docstring or signature contains the requirement id, by file and line."""
        if not rid:
            return []
        vector = self._sparse.encode_query(rid)
        found: dict[str, dict] = {}
        for name in CODE_COLLECTIONS:
            for hit in self._vectors.search_sparse(name, vector, CODE_HITS):
                text = f"{hit.payload.get('docstring') or ''} {hit.payload.get('signature') or ''}"
                if rid.upper() in text.upper():
                    found[hit.payload["unit_id"]] = hit.payload
        return sorted(found.values(), key=lambda u: (u["file_path"], u.get("start_line", 0)))

    def _add_code_tests(self, units: list[dict], tests: dict[str, TestItem]) -> None:
        """Test functions naming the requirement, with the status of their latest history."""
        flt = PayloadFilter(equals={"status": "active", "type": MemoryType.TEST_HISTORY.value})
        latest: dict[str, MemoryRecord] = {}
        offset: str | None = None
        while True:
            points, offset = self._vectors.scroll(MEMORIES, flt, limit=256, offset=offset)
            for m in (from_payload(p.payload) for p in points):
                key = _test_name(m).lower().rsplit("::", 1)[-1]
                if key not in latest or (m.created_at, m.id) > (latest[key].created_at, latest[key].id):
                    latest[key] = m
            if offset is None:
                break
        for unit in units:
            names = (unit["qualified_name"].lower(), unit["name"].lower())
            known = next((latest[n] for n in names if n in latest), None)
            if any(n in tests or any(t.endswith("::" + n) for t in tests) for n in names):
                continue  # already reported through its history's TESTS edge
            item = TestItem(test_name=unit["qualified_name"], status="unknown")
            if known is not None:
                item = _test_item(known)
            item.file_path = unit["file_path"]
            tests[names[0]] = item


def design_document(m: MemoryRecord) -> DesignDocument:
    kind = m.metadata.get("design_type")
    text = excerpt(m.content)
    return DesignDocument(memory_id=m.id, title=m.title, type=str(kind) if kind else None, excerpt=text)


def requirement_ref(m: MemoryRecord) -> RequirementRef:
    rid, status = m.metadata.get("requirement_id"), m.metadata.get("status")
    return RequirementRef(
        requirement_id=str(rid) if rid else None,
        title=m.title,
        status=str(status) if status else None,
        memory_id=m.id,
    )


def _report(
    req: MemoryRecord,
    impls: list[Implementation],
    designs: list[DesignDocument],
    tests: list[TestItem],
) -> TraceRequirementsOutput:
    impls.sort(key=lambda i: (-i.completeness, i.kind, i.file_path or "", i.component_id))
    tests.sort(key=lambda t: t.test_name)
    implementation = max((i.completeness for i in impls), default=0.0)
    passed = sum(1 for t in tests if t.status == "passed")
    testing = round(passed / len(tests), 3) if tests else 0.0
    design = 1.0 if designs else 0.0
    weighted = (
        WEIGHTS["implementation"] * implementation,
        WEIGHTS["testing"] * testing,
        WEIGHTS["design"] * design,
    )
    completeness = round(sum(weighted), 3)
    in_code = sum(1 for i in impls if i.completeness == 1.0)
    basis = (
        f"implementation {implementation}: {len(impls)} implementation(s), {in_code} backed by indexed code "
        f"(code counts 1.0, a memory's claim 0.5); testing {testing}: {passed} of {len(tests)} test(s) "
        f"passed at their latest run; design {design}: {len(designs)} design document(s); "
        f"completeness = 0.4*{implementation} + 0.4*{testing} + 0.2*{design} = {completeness}"
    )
    return TraceRequirementsOutput(
        requirement=requirement_ref(req),
        implementations=impls,
        design_documents=sorted(designs, key=lambda d: (d.title or "", d.memory_id)),
        tests=tests,
        coverage=Coverage(implementation=implementation, testing=testing),
        completeness=completeness,
        basis=basis,
    )


def _code_impl(node_id: str, label: str, name: str | None, path: object, rel: str) -> Implementation:
    file_path = path if isinstance(path, str) else (node_id if label == "File" else None)
    return Implementation(
        component_id=node_id, name=name, file_path=file_path, completeness=1.0, kind=label, relationship=rel
    )


def _test_name(m: MemoryRecord) -> str:
    return str(m.metadata.get("test_name") or m.title or m.id)


def _test_item(m: MemoryRecord) -> TestItem:
    status = m.metadata.get("status")
    path = m.metadata.get("file_path")
    return TestItem(
        test_name=_test_name(m),
        status=str(status) if status else "unknown",
        memory_id=m.id,
        file_path=path if isinstance(path, str) else None,
    )


def _unit_of(unit_id: str, name: str | None, path: object) -> dict:
    """The fields of a code unit's payload that tests need, from its graph node."""
    qualified = name or unit_id
    file_path = path if isinstance(path, str) else unit_id.split("::", 1)[0]
    return {
        "unit_id": unit_id,
        "qualified_name": qualified,
        "name": qualified.rsplit(".", 1)[-1],
        "file_path": file_path,
    }


def _label(unit: dict) -> str:
    return "Class" if unit.get("kind") == "class" else "Function"
