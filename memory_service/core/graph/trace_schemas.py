"""trace_requirements and get_design_context inputs and outputs (seed 001 §4.2.4), with extras.

trace_requirements adds the requirement's ``memory_id``, per implementation its ``kind`` and the
``relationship`` that found it, per test its ``memory_id``/``file_path``, and an overall
``completeness`` with the ``basis`` it was computed on. get_design_context adds memory ids, the
edge (or code relation) behind each dependency, and ``code`` when ``include_code`` is set.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memory_service.core.schema_base import MAX_PATH_CHARS, NonBlank, ToolInput, ToolOutput


class TraceRequirementsInput(ToolInput):
    requirement_id: NonBlank = Field(
        max_length=MAX_PATH_CHARS,
        description="A requirement id as written in the requirement's metadata (REQ-...), or its memory id",
    )


class RequirementRef(ToolOutput):
    requirement_id: str | None = None
    title: str | None = None
    status: str | None = None
    memory_id: str


class Implementation(ToolOutput):
    component_id: str = Field(description="A memory id, a code unit id or a file path")
    name: str | None = None
    file_path: str | None = None
    completeness: float = Field(description="1.0 for code in the index, 0.5 for a memory's claim")
    kind: str = Field(description="memory type (component, code_pattern...) or node label (Function, File)")
    relationship: str = Field(description="IMPLEMENTS, SATISFIES, CONTAINS or NAMES (code naming the id)")


class DesignDocument(ToolOutput):
    memory_id: str
    title: str | None = None
    type: str | None = Field(default=None, description="design_type: ADR, architecture, api...")
    excerpt: str = ""


class TestItem(ToolOutput):
    test_name: str
    status: str = Field(description="passed, failed, skipped, error, flaky, or unknown (no test_history)")
    memory_id: str | None = None
    file_path: str | None = None


class Coverage(ToolOutput):
    implementation: float
    testing: float


class TraceRequirementsOutput(ToolOutput):
    requirement: RequirementRef
    implementations: list[Implementation]
    design_documents: list[DesignDocument]
    tests: list[TestItem]
    coverage: Coverage
    completeness: float = Field(description="0.4 implementation + 0.4 testing + 0.2 design (see basis)")
    basis: str = Field(description="What was counted to compute coverage and completeness")


class DesignContextInput(ToolInput):
    component_id: NonBlank = Field(
        max_length=MAX_PATH_CHARS,
        description="A component memory's metadata.component_id or name, or its memory id; else an "
        "indexed file (path relative to the project root), a dotted module name or a directory",
    )
    include_code: bool = Field(default=False, description="Add the signatures of the component's code")


class PatternItem(ToolOutput):
    name: str
    usage_context: str | None = None
    memory_id: str


class DependencyItem(ToolOutput):
    component_id: str
    name: str | None = None
    memory_id: str
    via: str = Field(description="DEPENDS_ON (memories), CALLS or IMPORTS (code)")
    detail: str | None = Field(default=None, description="For code relations: which unit or file")


class CodeItem(ToolOutput):
    name: str
    kind: str
    signature: str
    file_path: str
    start_line: int | None = None


class DesignContextOutput(ToolOutput):
    component: dict[str, Any]
    requirements: list[RequirementRef]
    design_documents: list[DesignDocument]
    patterns: list[PatternItem]
    dependencies: list[DependencyItem]
    dependents: list[DependencyItem]
    code: list[CodeItem] | None = Field(default=None, description="Only with include_code")
