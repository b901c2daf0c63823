"""get_design_context: a component's requirements, design, patterns, neighbours and code.

The component is a ``component`` memory, else indexed code: a file, a module or a directory
(:mod:`.code_context`: the requirements its code implements and the decisions linked to them).
A component memory's one-hop graph neighbourhood gives requirements
(requirement memories it IMPLEMENTS or that name it), design documents (DOCUMENTED_IN), patterns
(FOLLOWS_PATTERN) and its code (File/Function/Class it CONTAINS). Dependencies and dependents are
component memories linked by DEPENDS_ON (out and in), then code relations between its code and
other components' code: CALLS between units, and IMPORTS of a module whose path matches another
component's file (``billing.ledger`` or ``./ledger`` matches ``.../billing/ledger.py``).
"""

from __future__ import annotations

from memory_service.core.code.context import CodeTarget, code_links, code_target, module_matches
from memory_service.core.code.records import CODE_COLLECTIONS, FILE_LABEL
from memory_service.core.errors import NotFoundError
from memory_service.core.graph.down import needs_graph
from memory_service.core.graph.lookup import excerpt, find_component, load_records
from memory_service.core.graph.trace import design_document, requirement_ref
from memory_service.core.graph.trace_schemas import (
    CodeItem,
    DependencyItem,
    DesignContextInput,
    DesignContextOutput,
    DesignDocument,
    PatternItem,
    RequirementRef,
)
from memory_service.core.models import MemoryRecord, MemoryType
from memory_service.core.ports import GraphStore, PayloadFilter, RelatedEntity, VectorStore
from memory_service.core.records import MEMORY_LABEL
from memory_service.core.write.linking import MemoryCatalog

UNIT_LABELS = ("Function", "Class")
MAX_UNITS = 500
__all__ = ["DesignContextService", "component_code", "module_matches"]


class DesignContextService:
    def __init__(self, vectors: VectorStore, graph: GraphStore) -> None:
        self._vectors = vectors
        self._graph = graph

    @needs_graph("get_design_context")
    def context(self, request: DesignContextInput) -> DesignContextOutput:
        """Raises: NotFoundError (NF_COMPONENT) when no component has that id or name and no
        indexed file, module or directory is called so."""
        try:
            comp, catalog = find_component(self._vectors, request.component_id)
        except NotFoundError as missing:
            target = code_target(self._graph, request.component_id)
            if target is None:
                missing.suggestion += (
                    " Indexed code works too: a file path relative to the project root, a dotted module "
                    "name or a directory."
                )
                raise
            return self._code_context(target, request.include_code)
        near = self._graph.related(MEMORY_LABEL, comp.id, None, "BOTH", 1, limit=500)
        memories = load_records(self._vectors, [e.id for e in near if e.label == MEMORY_LABEL])
        reqs: list[RequirementRef] = []
        designs: list[DesignDocument] = []
        patterns: list[PatternItem] = []
        deps: list[DependencyItem] = []
        dependents: list[DependencyItem] = []
        for e in near:
            m = memories.get(e.id)
            if m is None:
                continue
            if m.type == MemoryType.REQUIREMENTS:
                reqs.append(requirement_ref(m))
            elif m.type == MemoryType.DESIGN:
                designs.append(design_document(m))
            elif m.type == MemoryType.CODE_PATTERN:
                patterns.append(_pattern(m))
            elif m.type == MemoryType.COMPONENT and e.relationship == "DEPENDS_ON":
                item = _dependency(m, "DEPENDS_ON", None)
                (deps if e.direction == "OUTGOING" else dependents).append(item)
        files, units = self._code_of(comp.id)
        code_deps, code_dependents = self._code_relations({comp.id}, catalog, files, units)
        out = DesignContextOutput(
            component=_component_view(comp, sorted(files)),
            requirements=sorted(reqs, key=lambda r: (r.requirement_id or "", r.memory_id)),
            design_documents=sorted(designs, key=lambda d: (d.title or "", d.memory_id)),
            patterns=sorted(patterns, key=lambda p: (p.name, p.memory_id)),
            dependencies=_merge(deps, code_deps),
            dependents=_merge(dependents, code_dependents),
        )
        if request.include_code:
            out.code = self._signatures(files, units)
        return out

    def _code_context(self, target: CodeTarget, include_code: bool) -> DesignContextOutput:
        """A file's or module's context: the requirements its code implements, their decisions,
        the memories that name its code, and the code relations to components."""
        files = set(target.files)
        units = self._units_in(files, set())
        links = code_links(self._vectors, self._graph, files, units)
        catalog = MemoryCatalog.load(self._vectors)
        owners = set(links.components)
        deps, dependents = self._code_relations(owners, catalog, files, set())
        out = DesignContextOutput(
            component={
                "component_id": target.key,
                "name": target.files[0] if target.kind == "file" else target.key,
                "kind": target.kind,
                "file_path": target.files[0] if target.kind == "file" else None,
                "files": target.files,
                "components": sorted(
                    _dependency(m, "CONTAINS", None).component_id for m in links.components.values()
                ),
            },
            requirements=sorted(
                (requirement_ref(m) for m in links.requirements.values()),
                key=lambda r: (r.requirement_id or "", r.memory_id),
            ),
            design_documents=sorted(
                (design_document(m) for m in links.designs.values()),
                key=lambda d: (d.title or "", d.memory_id),
            ),
            patterns=sorted(
                (_pattern(m) for m in links.patterns.values()), key=lambda p: (p.name, p.memory_id)
            ),
            dependencies=_merge(deps),
            dependents=_merge(dependents),
        )
        if include_code:
            out.code = self._signatures(files, set())
        return out

    def _code_of(self, memory_id: str) -> tuple[set[str], set[str]]:
        return component_code(self._graph, memory_id)

    def _units_in(self, files: set[str], units: set[str]) -> list[RelatedEntity]:
        found: list[RelatedEntity] = []
        for path in sorted(files):
            found += self._graph.related(FILE_LABEL, path, ["CONTAINS"], "OUTGOING", 2, limit=MAX_UNITS)
        return [u for u in found if u.label in UNIT_LABELS]

    def _code_relations(
        self, own: set[str], catalog: MemoryCatalog, files: set[str], units: set[str]
    ) -> tuple[list[DependencyItem], list[DependencyItem]]:
        """CALLS and IMPORTS between this code (of the components ``own``) and other components'."""
        owner: dict[str, MemoryRecord] = {}  # file path -> the other component containing it
        for other in catalog.records.values():
            if other.type == MemoryType.COMPONENT and other.id not in own:
                for path in self._code_of(other.id)[0]:
                    owner.setdefault(path, other)
        if not owner or not files:
            return [], []
        deps: list[DependencyItem] = []
        dependents: list[DependencyItem] = []
        for unit in self._units_in(files, units):
            for hop in self._graph.related(unit.label, unit.id, ["CALLS"], "BOTH", 1, limit=100):
                callee = owner.get(str(hop.properties.get("file_path", "")))
                if callee is None:
                    continue
                if hop.direction == "OUTGOING":
                    deps.append(_dependency(callee, "CALLS", f"{unit.name} -> {hop.name}"))
                else:
                    dependents.append(_dependency(callee, "CALLS", f"{hop.name} -> {unit.name}"))
        for path in sorted(files):
            for mod in self._graph.related(FILE_LABEL, path, ["IMPORTS"], "OUTGOING", 1, limit=100):
                for other_path, other in owner.items():
                    if module_matches(mod.id, other_path):
                        deps.append(_dependency(other, "IMPORTS", f"{path} imports {mod.id}"))
        for other_path, other in sorted(owner.items()):
            for mod in self._graph.related(FILE_LABEL, other_path, ["IMPORTS"], "OUTGOING", 1, limit=100):
                for path in sorted(files):
                    if module_matches(mod.id, path):
                        dependents.append(_dependency(other, "IMPORTS", f"{other_path} imports {mod.id}"))
        return deps, dependents

    def _signatures(self, files: set[str], units: set[str]) -> list[CodeItem]:
        """Signatures from the code index: every unit of the files, and the units linked alone."""
        unit_files = {u.split("::", 1)[0] for u in units}
        items: list[CodeItem] = []
        for name in CODE_COLLECTIONS:
            for path in sorted(files | unit_files):
                flt = PayloadFilter(equals={"file_path": path})
                points, _ = self._vectors.scroll(name, flt, limit=MAX_UNITS)
                for p in points:
                    d = p.payload
                    if path in files or d.get("unit_id") in units:
                        items.append(
                            CodeItem(
                                name=d["qualified_name"],
                                kind=d.get("subkind") or d.get("kind") or "",
                                signature=d.get("signature", ""),
                                file_path=d["file_path"],
                                start_line=d.get("start_line"),
                            )
                        )
        return sorted(items, key=lambda c: (c.file_path, c.start_line or 0, c.name))


def component_code(graph: GraphStore, memory_id: str) -> tuple[set[str], set[str]]:
    """The files a component CONTAINS (with their units' files) and its units' ids."""
    code = graph.related(MEMORY_LABEL, memory_id, ["CONTAINS"], "OUTGOING", 1, limit=MAX_UNITS)
    files = {c.id for c in code if c.label == FILE_LABEL}
    units = {c.id for c in code if c.label in UNIT_LABELS}
    files |= {str(c.properties["file_path"]) for c in code if c.properties.get("file_path")}
    return files, units


def _pattern(m: MemoryRecord) -> PatternItem:
    usage = m.metadata.get("usage_context")
    return PatternItem(name=m.title or m.id, usage_context=str(usage) if usage else None, memory_id=m.id)


def _dependency(m: MemoryRecord, via: str, detail: str | None) -> DependencyItem:
    cid = m.metadata.get("component_id") or m.metadata.get("name") or m.id
    return DependencyItem(component_id=str(cid), name=m.title, memory_id=m.id, via=via, detail=detail)


def _merge(*groups: list[DependencyItem]) -> list[DependencyItem]:
    seen: dict[tuple[str, str, str | None], DependencyItem] = {}
    for item in (i for g in groups for i in g):
        seen.setdefault((item.memory_id, item.via, item.detail), item)
    return sorted(seen.values(), key=lambda i: (i.component_id, i.via, i.detail or ""))


def _component_view(m: MemoryRecord, files: list[str]) -> dict[str, object]:
    meta = m.metadata
    return {
        "memory_id": m.id,
        "component_id": meta.get("component_id") or meta.get("name") or m.id,
        "name": m.title,
        "component_type": meta.get("component_type"),
        "file_path": meta.get("file_path"),
        "files": files,
        "description": excerpt(m.content),
    }
