"""Index-time links from code to requirement and component memories (issue 10, item 1).

When a file is indexed, each function or class whose docstring, signature or qualified name names
a requirement id (:func:`.references.requirement_ids`) gets an edge to every active requirement
memory with that id: ``TESTS`` from a test unit (:func:`is_test_unit`, the rule trace_requirements
uses), ``IMPLEMENTS`` from any other unit. A unit whose docstring names a component memory's
``component_id`` gets ``TESTS`` (test unit) or ``RELATED_TO`` (other unit) to that memory; only
distinctive ids count (a whole token holding a ``-``, ``_``, ``.`` or a digit, matched exactly), so
a plain word such as ``ledger`` in prose links nothing. Names are resolved against the memories
that exist when the file is indexed (:class:`.linking.MemoryCatalog`, one load per stored batch);
a requirement added later is linked when the file is next indexed.

The edges carry ``{"via": "indexer"}``: they are derived from the code, so the indexer drops and
rewrites them with the unit (never relinked as a memory's citation, never a reason to flag the
memory stale).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from indexer import CodeUnit
from memory_service.core.code import records as cr
from memory_service.core.models import MemoryType
from memory_service.core.ports import GraphEdge
from memory_service.core.records import MEMORY_LABEL
from memory_service.core.write.linking import MemoryCatalog
from memory_service.core.write.references import requirement_ids

VIA = "via"
INDEXER = "indexer"
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_DISTINCTIVE = re.compile(r"[-_.0-9]")


def is_test_unit(name: str, file_path: str) -> bool:
    """A test: a name starting with ``test``, or a path with a ``test`` directory or prefix, or a
    ``.test.`` file (the rule trace_requirements applies to code naming a requirement)."""
    path = "/" + file_path
    return name.startswith("test") or "/test" in path or ".test." in path


def is_index_link(edge: GraphEdge) -> bool:
    return edge.properties.get(VIA) == INDEXER


def component_ids(catalog: MemoryCatalog) -> dict[str, list[str]]:
    """Distinctive component_ids (exact spelling) → the active component memories carrying them."""
    out: dict[str, list[str]] = {}
    for record in catalog.records.values():
        cid = record.metadata.get("component_id")
        if record.type == MemoryType.COMPONENT and isinstance(cid, str) and _DISTINCTIVE.search(cid.strip()):
            out.setdefault(cid.strip(), []).append(record.id)
    return out


def unit_links(units: Iterable[CodeUnit], catalog: MemoryCatalog) -> list[GraphEdge]:
    """The edges from these units to the requirement and component memories they name."""
    components = component_ids(catalog)
    edges: dict[tuple[str, str, str], GraphEdge] = {}
    for unit in units:
        doc = unit.docstring or ""
        test = is_test_unit(unit.name, unit.file_path)
        targets: list[tuple[str, str]] = []
        for rid in requirement_ids(f"{doc} {unit.signature} {unit.qualified_name}"):
            kind = "TESTS" if test else "IMPLEMENTS"
            targets += [(kind, m) for m in catalog.requirement(rid)]
        if components and doc:
            for token in dict.fromkeys(_TOKEN.findall(doc)):
                kind = "TESTS" if test else "RELATED_TO"
                targets += [(kind, m) for m in components.get(token, [])]
        label = cr.label_of(unit)
        for kind, memory_id in targets:
            edges.setdefault(
                (kind, unit.id, memory_id),
                GraphEdge(kind, label, unit.id, MEMORY_LABEL, memory_id, {VIA: INDEXER}),
            )
    return list(edges.values())
