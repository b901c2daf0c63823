"""get_design_context of indexed code: a file or module, found in the code index rather than among
the component memories.

The target is an indexed file (``billing/ledger.py``), a module naming one (``billing.ledger``, or
the path without its extension), or a directory / package (``billing``, ``billing/``: every
indexed file under it). Its requirements are those its code implements, read the way
trace_requirements reads them: ``IMPLEMENTS`` edges the indexer wrote from its functions and
classes (:mod:`.index_links`), and units whose docstring, signature or qualified name names a
requirement id (for code indexed before the requirement existed). Test units test, they do not
implement, so they count for neither. Memories linked to the code itself (naming the file or a
unit, or a component that CONTAINS it) add requirements, design documents, patterns and the
owning components. The design documents also hold the decisions linked to those requirements
(any edge between a design memory and the requirement), so asking about a file reaches the
decisions behind the requirements it implements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memory_service.core.code.links import is_test_unit
from memory_service.core.code.records import CODE_COLLECTIONS, FILE_LABEL
from memory_service.core.graph.lookup import load_records
from memory_service.core.models import MemoryRecord, MemoryType
from memory_service.core.ports import GraphStore, PayloadFilter, RelatedEntity, VectorStore
from memory_service.core.records import MEMORY_LABEL
from memory_service.core.write.linking import MemoryCatalog
from memory_service.core.write.references import requirement_ids

UNIT_LABELS = ("Function", "Class")
MAX_FILES = 200  # of a directory; the first ones by path
MAX_UNITS = 500
MAX_LINKS = 500


@dataclass
class CodeTarget:
    """What a get_design_context key names in the code index."""

    key: str
    kind: str  # "file" or "module"
    files: list[str]


@dataclass
class CodeLinks:
    """Memories reached from a target's code, by id (ordered, deduplicated)."""

    requirements: dict[str, MemoryRecord] = field(default_factory=dict)
    designs: dict[str, MemoryRecord] = field(default_factory=dict)
    patterns: dict[str, MemoryRecord] = field(default_factory=dict)
    components: dict[str, MemoryRecord] = field(default_factory=dict)


def code_target(graph: GraphStore, key: str) -> CodeTarget | None:
    """The indexed file, module or directory ``key`` names; None when it names no indexed code."""
    name = key.strip().replace("\\", "/").removeprefix("./").rstrip("/")
    if not name:
        return None
    files = graph.node_ids(FILE_LABEL)
    if name in files:
        return CodeTarget(key, "file", [name])
    matched = sorted(f for f in files if module_matches(name, f))
    if not matched:
        prefix = (name.replace(".", "/") if "/" not in name else name) + "/"
        matched = sorted(f for f in files if f.startswith(prefix) or f.startswith(name + "/"))
    return CodeTarget(key, "module", matched[:MAX_FILES]) if matched else None


def module_matches(module: str, path: str) -> bool:
    """Whether an imported module name denotes this file (dotted or relative, extension-free)."""
    relative = module.startswith(".")
    name = module.lstrip("./")
    if not name:
        return False
    if not relative:
        name = name.replace(".", "/")
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return stem == name or stem.endswith("/" + name)


def code_links(
    vectors: VectorStore, graph: GraphStore, files: Iterable[str], units: list[RelatedEntity]
) -> CodeLinks:
    """The requirements the code of ``files`` implements, the memories linked to that code, and
    the design decisions linked to those requirements."""
    files = sorted(set(files))
    implementing = [
        u for u in units if not is_test_unit(_short_name(u), str(u.properties.get("file_path", "")))
    ]
    nodes = {FILE_LABEL: files, **{lb: [u.id for u in units if u.label == lb] for lb in UNIT_LABELS}}
    edges = graph.edges_between(MEMORY_LABEL, {lb: ids for lb, ids in nodes.items() if ids})
    implementers = {u.id for u in implementing}
    implemented: list[str] = []
    linked: list[str] = []
    for e in edges:
        if e.type == "IMPLEMENTS" and e.source_id in implementers and e.target_label == MEMORY_LABEL:
            implemented.append(e.target_id)
        elif e.type != "TESTS":  # a test unit's link: it tests the requirement, it does not implement it
            linked.append(e.source_id if e.source_label == MEMORY_LABEL else e.target_id)
    catalog = MemoryCatalog.load(vectors)
    for rid in _named_requirement_ids(vectors, files, {u.id for u in units} - implementers):
        implemented += catalog.requirement(rid)
    records = load_records(vectors, [*implemented, *linked])
    out = CodeLinks()
    for mid in dict.fromkeys([*implemented, *linked]):
        m = records.get(mid)
        if m is not None:
            _sort_into(out, m)
    _add_decisions(vectors, graph, out)
    return out


def _named_requirement_ids(vectors: VectorStore, files: list[str], tests: set[str]) -> list[str]:
    """Requirement ids named by the non-test units of these files (the indexer's linking rule)."""
    found: list[str] = []
    for name in CODE_COLLECTIONS:
        for path in files:
            points, _ = vectors.scroll(name, PayloadFilter(equals={"file_path": path}), limit=MAX_UNITS)
            for p in points:
                d = p.payload
                if d.get("unit_id") in tests or is_test_unit(str(d.get("name", "")), path):
                    continue
                text = (
                    f"{d.get('docstring') or ''} {d.get('signature') or ''} {d.get('qualified_name') or ''}"
                )
                found += requirement_ids(text)
    return list(dict.fromkeys(found))


def _add_decisions(vectors: VectorStore, graph: GraphStore, out: CodeLinks) -> None:
    """Design memories linked (either way, any edge) to the requirements found."""
    near: list[str] = []
    for rid in out.requirements:
        linked = graph.related(MEMORY_LABEL, rid, None, "BOTH", 1, limit=MAX_LINKS)
        near += [e.id for e in linked if e.label == MEMORY_LABEL]
    for m in load_records(vectors, near).values():
        if m.type == MemoryType.DESIGN:
            out.designs.setdefault(m.id, m)


def _sort_into(out: CodeLinks, m: MemoryRecord) -> None:
    if m.type == MemoryType.REQUIREMENTS:
        out.requirements.setdefault(m.id, m)
    elif m.type == MemoryType.DESIGN:
        out.designs.setdefault(m.id, m)
    elif m.type == MemoryType.CODE_PATTERN:
        out.patterns.setdefault(m.id, m)
    elif m.type == MemoryType.COMPONENT:
        out.components.setdefault(m.id, m)


def _short_name(unit: RelatedEntity) -> str:
    return (unit.name or unit.id.split("::", 1)[-1]).rsplit(".", 1)[-1]
