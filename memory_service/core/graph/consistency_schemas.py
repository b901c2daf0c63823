"""check_consistency and validate_fix inputs and outputs (seed 001 §4.2.4), with extras.

Both add a ``basis`` saying how the score was computed. check_consistency adds memory ids and
the ``source`` of the base pattern's reference code; each deviation names the ``unit`` it is
about. validate_fix adds per concern the ``related_decision`` (design memory id) or
``related_component`` it is about.
"""

from __future__ import annotations

from pydantic import Field

from memory_service.core.graph.trace_schemas import DesignDocument, PatternItem, RequirementRef
from memory_service.core.schema_base import (
    MAX_PATH_CHARS,
    Absent,
    NonBlank,
    ToolInput,
    ToolOutput,
    absent_when_none,
)

MAX_AFFECTED_FILES = 200


class CheckConsistencyInput(ToolInput):
    component_id: NonBlank = Field(
        max_length=MAX_PATH_CHARS,
        description="A component memory's metadata.component_id or name, or its memory id",
    )


class ComponentRef(ToolOutput):
    name: str | Absent = absent_when_none()
    type: str | Absent = absent_when_none(description="metadata.component_type")
    file_path: str | Absent = absent_when_none()
    component_id: str
    memory_id: str


class BasePattern(ToolOutput):
    name: str
    file_path: str | Absent = absent_when_none(description="The first file of the reference code")
    memory_id: str
    source: str = Field(description="'pattern code' (code the pattern names) or 'sibling components'")
    reference_files: list[str] = Field(default_factory=list)


class Deviation(ToolOutput):
    type: str = Field(
        description="missing_member, naming, signature, decorator, base_class, extra_member, no_code"
    )
    expected: str
    actual: str
    severity: str = Field(description="high, medium, low or info (info does not lower the score)")
    unit: str | None = Field(default=None, description="The component's unit (or the pattern's) concerned")


class CheckConsistencyOutput(ToolOutput):
    component: ComponentRef
    base_pattern: BasePattern | Absent = absent_when_none(description="Absent when no pattern applies")
    consistency_score: float = Field(description="Checks passed / checks made (0-1), see basis")
    deviations: list[Deviation]
    recommendations: list[str]
    basis: str


class ValidateFixInput(ToolInput):
    fix_description: NonBlank = Field(description="What the fix changes, in words")
    component_id: NonBlank = Field(
        max_length=MAX_PATH_CHARS,
        description="A component memory's metadata.component_id or name, or its memory id",
    )
    affected_files: list[NonBlank] = Field(
        default_factory=list, max_length=MAX_AFFECTED_FILES, description="Paths relative to the project root"
    )


class FixDesignContext(ToolOutput):
    requirements: list[RequirementRef]
    design_documents: list[DesignDocument]
    patterns: list[PatternItem]


class Concern(ToolOutput):
    type: str = Field(
        description="foreign_file, outside_component, contradicts_decision, removes_required_behaviour, "
        "departs_from_pattern, no_design_reference"
    )
    message: str
    severity: str = Field(description="high, medium or low")
    related_requirement: str | None = None
    related_decision: str | None = Field(default=None, description="The design memory id")
    related_component: str | None = None


class ValidateFixOutput(ToolOutput):
    alignment_score: float = Field(description="1 - 0.3 per high - 0.15 per medium - 0.05 per low concern")
    design_context: FixDesignContext
    concerns: list[Concern]
    recommendations: list[str]
    basis: str
