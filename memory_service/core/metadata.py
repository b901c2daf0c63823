"""Type-specific metadata for the seed-001 memory types and the seed-002 kinds.

Each model names the fields a type is known to carry and checks their types and enums; other
keys are kept as given (``extra="allow"``), so agents can record more than we foresaw. Enum values
are matched case-insensitively and stored in their canonical spelling.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory_service.core.models import MemoryType


class _Meta(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)


def _canonical(enum: type[StrEnum], value: Any) -> Any:
    if isinstance(value, str):
        for member in enum:
            if member.value.lower() == value.strip().lower():
                return member.value
    return value


class Priority(StrEnum):
    CRITICAL = "Critical"
    HIGH = "High"
    MEDIUM = "Medium"
    LOW = "Low"


class RequirementStatus(StrEnum):
    DRAFT = "Draft"
    PROPOSED = "Proposed"
    APPROVED = "Approved"
    IMPLEMENTED = "Implemented"
    VERIFIED = "Verified"
    DEPRECATED = "Deprecated"


class RequirementsMeta(_Meta):
    requirement_id: str | None = None
    title: str | None = None
    priority: Priority | None = None
    status: RequirementStatus | None = None
    source_document: str | None = None

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, v: Any) -> Any:
        return _canonical(Priority, v)

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, v: Any) -> Any:
        return _canonical(RequirementStatus, v)


class DesignType(StrEnum):
    ADR = "ADR"
    ARCHITECTURE = "architecture"
    API = "api"
    DATA_MODEL = "data_model"
    COMPONENT = "component"
    OTHER = "other"


class DesignStatus(StrEnum):
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    DEPRECATED = "deprecated"
    SUPERSEDED = "superseded"


class DesignMeta(_Meta):
    design_type: DesignType | None = None
    title: str | None = None
    status: DesignStatus | None = None
    component: str | None = None
    related_requirements: list[str] | None = None

    @field_validator("design_type", mode="before")
    @classmethod
    def _design_type(cls, v: Any) -> Any:
        return _canonical(DesignType, v)

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, v: Any) -> Any:
        return _canonical(DesignStatus, v)


class CodePatternMeta(_Meta):
    pattern_name: str | None = None
    language: str | None = None
    usage_context: str | None = None
    file_path: str | None = None


class ComponentMeta(_Meta):
    component_id: str | None = None
    name: str | None = None
    component_type: str | None = None
    file_path: str | None = None
    dependencies: list[str] | None = None


class FunctionMeta(_Meta):
    name: str | None = None
    signature: str | None = None
    file_path: str | None = None
    language: str | None = None
    start_line: int | None = None
    end_line: int | None = None


class TestStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"
    FLAKY = "flaky"


class TestHistoryMeta(_Meta):
    test_name: str | None = None
    status: TestStatus | None = None
    file_path: str | None = None
    error_message: str | None = None
    duration_ms: float | None = None

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, v: Any) -> Any:
        return _canonical(TestStatus, v)


class SessionMeta(_Meta):
    session_id: str | None = None
    summary: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    files_touched: list[str] | None = None


class UserPreferenceMeta(_Meta):
    key: str | None = None
    category: str | None = None
    value: Any = None


class ProblemMeta(_Meta):
    title: str | None = None
    error_signature: str | None = None
    file_path: str | None = None


class SolutionMeta(_Meta):
    """A fix for a problem; ``problem_id`` (or a relationship to a problem) is required."""

    problem_id: str | None = None
    title: str | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)


class FailedTacticMeta(_Meta):
    """Something tried against a problem that did not work, and why, so nobody retries it."""

    problem_id: str | None = None
    title: str | None = None
    reason: str | None = None


class FactMeta(_Meta):
    """A statement about the codebase; memory_supersede sets ``superseded_by`` when it stops holding."""

    subject: str | None = None
    title: str | None = None
    superseded: bool | None = None
    superseded_by: str | None = None


class PreferenceMeta(_Meta):
    key: str | None = None
    category: str | None = None
    value: Any = None


class ChangeType(StrEnum):
    CODE = "code"
    SCHEMA = "schema"
    CONFIG = "config"
    RUNBOOK = "runbook"
    INFRA = "infra"


class ChangeMeta(_Meta):
    """A change in the codebase (seed 004 FR-010's change kind: change_type, subject, summary)."""

    change_type: ChangeType | None = None
    subject_ref: Any = None
    summary: str | None = None
    title: str | None = None
    pr_id: str | None = None
    commit: str | None = None

    @field_validator("change_type", mode="before")
    @classmethod
    def _change_type(cls, v: Any) -> Any:
        return _canonical(ChangeType, v)


METADATA_MODELS: dict[str, type[_Meta]] = {
    MemoryType.REQUIREMENTS: RequirementsMeta,
    MemoryType.DESIGN: DesignMeta,
    MemoryType.CODE_PATTERN: CodePatternMeta,
    MemoryType.COMPONENT: ComponentMeta,
    MemoryType.FUNCTION: FunctionMeta,
    MemoryType.TEST_HISTORY: TestHistoryMeta,
    MemoryType.SESSION: SessionMeta,
    MemoryType.USER_PREFERENCE: UserPreferenceMeta,
    MemoryType.PROBLEM: ProblemMeta,
    MemoryType.SOLUTION: SolutionMeta,
    MemoryType.FAILED_TACTIC: FailedTacticMeta,
    MemoryType.FACT: FactMeta,
    MemoryType.PREFERENCE: PreferenceMeta,
    MemoryType.CHANGE: ChangeMeta,
}


def metadata_model(memory_type: str) -> type[_Meta]:
    """The metadata model of a type; unknown types get the permissive base."""
    return METADATA_MODELS.get(memory_type, _Meta)
