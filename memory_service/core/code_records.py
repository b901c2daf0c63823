"""How code units are laid out in the stores: collections, point ids, payloads, graph nodes.

Functions and methods go to the ``functions`` collection, class-like units to ``classes``. The
dense vector embeds a short summary (qualified name, signature, first docstring sentence): cost
grows with sequence length, and the summary is what a description in words matches. Identifiers,
the rest of the docstring and the path go to the sparse (BM25) vector, which costs nothing to build.
"""

from __future__ import annotations

import uuid
from typing import Any

from indexer import CodeRelation, CodeUnit, FileIndex, RelationType, UnitKind, embedding_text
from memory_service.core.ports import CollectionSpec, GraphEdge, GraphNode

FUNCTIONS = "functions"
CLASSES = "classes"
CODE_COLLECTIONS = (FUNCTIONS, CLASSES)
FILE_LABEL = "File"
MODULE_LABEL = "Module"
_NAMESPACE = uuid.UUID("6f1c2a44-7d3e-4b1a-9a55-0c3f8e2d1b77")
DENSE_MAX_CHARS = 240


def code_collection(name: str, dim: int) -> CollectionSpec:
    return CollectionSpec(
        name=name,
        dense_dim=dim,
        sparse=True,
        keyword_indexes=("unit_id", "language", "file_path", "kind", "body_hash", "normalized_hash", "name"),
    )


def collection_of(unit: CodeUnit) -> str:
    return CLASSES if unit.kind is UnitKind.CLASS else FUNCTIONS


def label_of(unit: CodeUnit) -> str:
    return "Class" if unit.kind is UnitKind.CLASS else "Function"


def point_id(unit_id: str) -> str:
    """Vector-store ids are UUIDs; unit ids are readable strings, so derive one stably."""
    return str(uuid.uuid5(_NAMESPACE, unit_id))


def dense_text(unit: CodeUnit) -> str:
    """Short summary for the dense model: name, signature, first docstring sentence."""
    text = f"{unit.qualified_name}: {unit.signature}"
    if unit.docstring:
        first = unit.docstring.strip().split("\n\n")[0].split(". ")[0]
        text += f" — {' '.join(first.split())}"
    return text[:DENSE_MAX_CHARS]


def sparse_text(unit: CodeUnit) -> str:
    """Everything lexical: summary, docstring, identifier words and the file path."""
    return f"{embedding_text(unit)}\n{unit.file_path.replace('/', ' ')}"


def payload(unit: CodeUnit, project: str | None) -> dict[str, Any]:
    data = unit.model_dump(mode="json")
    data["unit_id"] = data.pop("id")
    data["project"] = project
    return data


def unit_from_payload(data: dict[str, Any]) -> CodeUnit:
    fields = {k: v for k, v in data.items() if k in CodeUnit.model_fields}
    fields["id"] = data["unit_id"]
    return CodeUnit.model_validate(fields)


def file_node(fi: FileIndex) -> GraphNode:
    name = fi.path.rsplit("/", 1)[-1]
    return GraphNode(FILE_LABEL, fi.path, {"name": name, "type": fi.language, "line_count": fi.line_count})


def unit_node(unit: CodeUnit) -> GraphNode:
    return GraphNode(
        label_of(unit),
        unit.id,
        {
            "name": unit.qualified_name,
            "type": unit.subkind or unit.kind.value,
            "file_path": unit.file_path,
            "start_line": unit.start_line,
            "language": unit.language,
        },
    )


def graph_edges(relations: list[CodeRelation], labels: dict[str, str]) -> list[GraphEdge]:
    """Relations whose ends are known (units, files, modules) as graph edges."""
    edges = []
    for rel in relations:
        source_label = labels.get(rel.source_id)
        if source_label is None:
            continue
        if rel.type is RelationType.IMPORTS and rel.target_name:
            edges.append(GraphEdge("IMPORTS", source_label, rel.source_id, MODULE_LABEL, rel.target_name))
            continue
        target_label = labels.get(rel.target_id or "")
        if target_label is None or rel.target_id is None:
            continue
        edges.append(GraphEdge(rel.type.value, source_label, rel.source_id, target_label, rel.target_id))
    return edges


def labels_for(files: list[FileIndex]) -> dict[str, str]:
    """Node label of every id appearing in these files (the file itself and its units)."""
    labels = {fi.path: FILE_LABEL for fi in files}
    for fi in files:
        for unit in fi.units:
            labels[unit.id] = label_of(unit)
    return labels
