"""The export file format (docs/export-format.md): one JSON object a line, header, memories, trailer.

Lines are written with sorted keys and no optional whitespace, so the same data always gives the
same bytes: exporting, importing into an empty store and exporting again gives identical memory
lines. Reading validates every line before anything is written (:func:`validate_file`): a file
cut short, a corrupt line or another format version is refused as a whole, naming the line.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticError

from memory_service.core.code.paths import echo
from memory_service.core.errors import ValidationError
from memory_service.core.models import MemoryRecord, MemoryType, content_hash
from memory_service.core.ports import GraphEdge, Vote
from memory_service.core.records import MEMORY_LABEL

FORMAT = "memory-service-export"
FORMAT_VERSION = 1
MAX_REPORTED_ERRORS = 20  # what an error lists of the bad lines (the count says how many in all)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")  # labels and relationship types
_ALLOWED_TYPES = frozenset(t.value for t in MemoryType)


def dumps(value: Any) -> str:
    """One line's JSON: sorted keys, compact, UTF-8 as is (lines end at ``\\n`` only)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def float32_text(values: list[float]) -> list[float]:
    """Vectors are stored as float32: nine significant digits give the same float32 back."""
    return [float(f"{x:.9g}") for x in values]


class Header(BaseModel):
    model_config = ConfigDict(extra="allow")

    format: str
    format_version: int
    model: str
    dim: int = Field(ge=1)
    exported_at: datetime
    filters: dict[str, Any] = Field(default_factory=dict)
    service_version: str = ""
    include_embeddings: bool = False


class EdgeLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(pattern=_IDENT.pattern)
    source_label: str = Field(pattern=_IDENT.pattern)
    source_id: str = Field(min_length=1, max_length=1000)
    target_label: str = Field(pattern=_IDENT.pattern)
    target_id: str = Field(min_length=1, max_length=1000)
    properties: dict[str, Any] = Field(default_factory=dict)

    def edge(self) -> GraphEdge:
        return GraphEdge(
            self.type, self.source_label, self.source_id, self.target_label, self.target_id, self.properties
        )

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.source_label, self.source_id), (self.target_label, self.target_id)

    @staticmethod
    def of(edge: GraphEdge) -> dict[str, Any]:
        return {
            "type": edge.type,
            "source_label": edge.source_label,
            "source_id": edge.source_id,
            "target_label": edge.target_label,
            "target_id": edge.target_id,
            "properties": edge.properties,
        }


class VoteLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    problem_id: str = Field(max_length=1000)
    vote: float = Field(ge=-1.0, le=1.0)
    actor: str = Field(max_length=1000)
    timestamp: str | None = Field(default=None, max_length=100)

    def to_vote(self, memory_id: str) -> Vote:
        return Vote(memory_id, self.problem_id, self.vote, self.actor, self.timestamp)


class MemoryLine(BaseModel):
    """One memory: the whole record, the graph edges it carries, its votes, maybe its vector."""

    model_config = ConfigDict(extra="forbid")

    memory: MemoryRecord
    relationships: list[EdgeLine] = Field(default_factory=list)
    votes: list[VoteLine] = Field(default_factory=list)
    embedding: list[float] | None = None

    @field_validator("memory")
    @classmethod
    def _record_holds(cls, record: MemoryRecord) -> MemoryRecord:
        if record.type not in _ALLOWED_TYPES:
            raise ValueError(f"memory.type '{echo(record.type)}' is not a memory type")
        if record.content_hash != content_hash(record.content):
            actual = content_hash(record.content)
            raise ValueError(f"memory.content_hash does not match the content (its SHA-256 is {actual})")
        return record

    def check(self, dim: int) -> None:
        """What a line must hold beyond its shape: edges touch the memory, the vector fits."""
        me = self.memory.id
        for i, rel in enumerate(self.relationships):
            if (MEMORY_LABEL, me) not in rel.ends():
                raise ValueError(f"relationships[{i}] does not touch memory {me}")
        if self.embedding is not None:
            if len(self.embedding) != dim:
                raise ValueError(f"embedding has {len(self.embedding)} values, the header's dim is {dim}")
            if not all(math.isfinite(x) for x in self.embedding):
                raise ValueError("embedding holds a value that is not a finite number")


class Trailer(BaseModel):
    model_config = ConfigDict(extra="allow")

    end: Literal[True]
    count: int = Field(ge=0)
    relationships: int | None = None
    votes: int | None = None
    sha256: str | None = Field(default=None, description="of every byte before the trailer line")


class ValidatedFile(BaseModel):
    """What a clean pass over a file found; the lines are read again from ``copy`` to be written."""

    header: Header
    ids: list[str]
    lines: int
    relationships: int
    votes: int
    copy_path: Path


def problem_text(exc: PydanticError | ValueError) -> str:
    """A short reading of a validation failure: the first few fields and what was wrong."""
    if isinstance(exc, PydanticError):
        parts = []
        for err in exc.errors()[:3]:
            loc = ".".join(str(p) for p in err["loc"])
            msg = str(err["msg"]).removeprefix("Value error, ")
            parts.append(f"{loc}: {msg}" if loc else msg)
        more = len(exc.errors()) - 3
        return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
    return str(exc)


def iter_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, raw bytes without the newline)."""
    for number, raw in enumerate(stream, start=1):
        yield number, raw.removesuffix(b"\n").removesuffix(b"\r")


def parse_line(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg}, column {exc.colno})") from None


class FileProblems:
    """Bad lines found by a validating pass, bounded; raised as one error naming the first."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[dict[str, Any]] = []
        self.total = 0

    def add(self, line: int, error: str) -> None:
        self.total += 1
        if len(self.items) < MAX_REPORTED_ERRORS:
            self.items.append({"line": line, "error": error})

    def raise_if_any(self) -> None:
        if not self.total:
            return
        first = self.items[0]
        more = f" ({self.total - 1} more bad lines)" if self.total > 1 else ""
        raise ValidationError(
            f"Line {first['line']} of {self.name}: {first['error']}{more}; nothing was imported",
            code="VAL_IMPORT_FILE",
            details={"file": self.name, "errors": self.items, "error_count": self.total},
            suggestion="Fix or remove the lines listed in details.errors and import again; a file cut "
            "short (no trailer line) must be exported again. After editing a file by hand, drop the "
            "trailer's sha256 (or correct count) so that the check matches.",
        )


def version_error(name: str, found: int) -> ValidationError:
    return ValidationError(
        f"{name} is export format version {found}; this server reads version {FORMAT_VERSION}",
        code="VAL_IMPORT_VERSION",
        details={"file": name, "format_version": found, "supported": [FORMAT_VERSION]},
        suggestion="Import it with the memory-service version that wrote it (see the header's "
        "service_version), or export it again from there in this version's format.",
    )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
