"""Memories that cite code: ``metadata.code_refs`` names indexed functions, classes or files.

Each ref is a code unit id (``shop/billing.py::charge#function``), a qualified name (``charge``,
``Cart.add``) or an indexed file path (``shop/billing.py``). It is resolved against the code graph
when the memory is written and becomes a ``CITES`` edge from the Memory node; the indexer reads
those edges (``GraphStore.edges_into``) to flag the memory stale when that code changes or
vanishes (:mod:`.stale`). Relationships keep linking memories to memories (seed 001: UUIDs).
"""

from __future__ import annotations

from typing import Any

from memory_service.core.code import records as cr
from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.ports import GraphEdge, GraphStore
from memory_service.core.records import MEMORY_LABEL

CODE_REFS = "code_refs"
CITES = "CITES"
CODE_LABELS = ("Function", "Class", cr.FILE_LABEL)
MAX_CODE_REFS = 20


def code_ref_edges(
    graph: GraphStore, memory_id: str, metadata: dict[str, Any], *, field: str
) -> list[GraphEdge]:
    """``CITES`` edges from the memory to each code unit or file its ``code_refs`` name.

    Raises:
        ValidationError: code_refs is not a list of up to 20 strings, or a name matches several units.
        NotFoundError: a ref matches nothing indexed.
    """
    refs = metadata.get(CODE_REFS)
    if refs is None:
        return []
    where = f"{field}.{CODE_REFS}"
    if not isinstance(refs, list) or len(refs) > MAX_CODE_REFS or not all(isinstance(r, str) for r in refs):
        raise ValidationError(
            f"Field '{where}' must be a list of at most {MAX_CODE_REFS} strings",
            code="VAL_METADATA_INVALID",
            details={"field": where, "provided": str(refs)[:100]},
            suggestion="Give code unit ids, qualified names or file paths, "
            "e.g. ['shop/billing.py', 'charge'].",
        )
    edges: dict[tuple[str, str], GraphEdge] = {}
    for i, ref in enumerate(refs):
        label, node_id = _resolve(graph, ref.strip(), f"{where}[{i}]")
        edges[(label, node_id)] = GraphEdge(CITES, MEMORY_LABEL, memory_id, label, node_id)
    return list(edges.values())


def _resolve(graph: GraphStore, ref: str, field: str) -> tuple[str, str]:
    found = graph.find_nodes(CODE_LABELS, ref, limit=5) if ref else []
    exact = [n for n in found if n.id == ref]
    if exact or len(found) == 1:
        node = (exact or found)[0]
        return node.label, node.id
    if not found:
        raise NotFoundError(
            f"Code reference '{ref[:100]}' matches no indexed function, class or file",
            code="NF_CODE_REF",
            details={"field": field, "provided": ref[:100]},
            suggestion="Index the code first (index_file / index_directory), then cite a unit id, "
            "a qualified name (code_search shows them) or a file path relative to the project root.",
        )
    raise ValidationError(
        f"Code reference '{ref[:100]}' matches {len(found)} code units",
        code="VAL_AMBIGUOUS_CODE_REF",
        details={"field": field, "provided": ref[:100], "candidates": [n.id for n in found]},
        suggestion="Cite one of the candidates by its unit id.",
    )
