"""How code units are laid out in the stores: collections, point ids, payloads, graph nodes.

Functions and methods go to the ``functions`` collection, class-like units to ``classes``. The
dense vector embeds a short summary (the words of the qualified name, the signature's head, the
first docstring sentence): cost grows with sequence length, and the summary is what a description
in words matches. Identifiers, the rest of the docstring and the path go to the sparse (BM25) vector,
which costs nothing to build.
"""

from __future__ import annotations

import base64
import re
import uuid
from typing import Any

from indexer import CodeRelation, CodeUnit, FileIndex, RelationType, UnitKind, embedding_text
from indexer.shingles import VERSION as SHINGLES_VERSION
from indexer.shingles import Shingles
from memory_service.core.ports import CollectionSpec, GraphEdge, GraphNode

FUNCTIONS = "functions"
CLASSES = "classes"
CODE_COLLECTIONS = (FUNCTIONS, CLASSES)
FILE_LABEL = "File"
MODULE_LABEL = "Module"
CLONE_SHINGLES, CLONE_VERSION = "clone_shingles", "clone_version"  # payload keys (see `payload`)
_NAMESPACE = uuid.UUID("6f1c2a44-7d3e-4b1a-9a55-0c3f8e2d1b77")
DENSE_MAX_CHARS = 240
DENSE_SIGNATURE_CHARS = 120  # past this a signature is type annotations and defaults
_NAME_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")


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
    """Short summary for the dense model: name words, signature head, first docstring sentence.

    The qualified name goes in as its words (``Help.boxWrap`` as ``help box wrap``): the model's
    tokenizer knows words, not camelCase, and words cost fewer tokens than ``_`` and ``.``; the
    name as written is in the signature. The signature is cut at ``DENSE_SIGNATURE_CHARS`` so that
    a long annotated one leaves room for the docstring. Every token costs embedding time at index
    time, so nothing else goes in (identifiers go to the sparse vector).
    """
    text = f"{name_words(unit.qualified_name) or unit.qualified_name}: "
    text += " ".join(unit.signature.split())[:DENSE_SIGNATURE_CHARS]
    if unit.docstring:
        first = unit.docstring.strip().split("\n\n")[0].split(". ")[0]
        text += f" — {' '.join(first.split())}"
    return text[:DENSE_MAX_CHARS]


def name_words(name: str) -> str:
    """Lower-case words of a (qualified) name: ``Help._concatValue`` -> ``help concat value``.

    camelCase and acronyms are split in ASCII names only; other names split at ``_`` and
    punctuation but keep their letters whole.
    """
    words: list[str] = []
    for chunk in re.split(r"[\W_]+", name):
        if chunk:
            words += _NAME_PART.findall(chunk) if chunk.isascii() else [chunk]
    return " ".join(word.lower() for word in words)


def sparse_text(unit: CodeUnit) -> str:
    """Everything lexical: summary, docstring, identifier words and the file path."""
    return f"{embedding_text(unit)}\n{unit.file_path.replace('/', ' ')}"


def payload(unit: CodeUnit, project: str | None) -> dict[str, Any]:
    data = unit.model_dump(mode="json")
    data["unit_id"] = data.pop("id")
    data["project"] = project
    if unit.shingles:  # near-miss clone detection (services.clones); not a CodeUnit field when read
        data[CLONE_SHINGLES] = base64.b64encode(unit.shingles).decode("ascii")
        data[CLONE_VERSION] = SHINGLES_VERSION
    return data


def location(data: dict[str, Any]) -> tuple[str, str]:
    """A unit's place, from its payload: (file path, qualified name)."""
    return str(data.get("file_path", "")), str(data.get("qualified_name", ""))


def shingles_of(data: dict[str, Any]) -> Shingles | None:
    """The clone shingles stored with a unit; None when it was indexed without them (or with an
    older layout): such an index needs ``reindex`` with scope ``full`` for near-miss clones."""
    encoded = data.get(CLONE_SHINGLES)
    if data.get(CLONE_VERSION) != SHINGLES_VERSION or not isinstance(encoded, str):
        return None
    try:
        return Shingles.decode(base64.b64decode(encoded, validate=True))
    except ValueError:  # binascii.Error: not base64
        return None


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
