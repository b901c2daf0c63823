"""memory_feedback and memory_supersede inputs and outputs (seed 002's update operations).

``utility_vote`` becomes memory_feedback; ``fact_update_link`` (write a change, write a
replacement fact, link them) becomes memory_supersede, which can write the two memories itself.
Both take seed 002's ``mode``: ``dry_run`` validates and previews, ``commit`` persists.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from memory_service.core.schema_base import UUID_FORMAT, ToolInput, ToolOutput

Mode = Literal["dry_run", "commit"]


class MemoryFeedbackInput(ToolInput):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT, description="The memory being rated")
    problem_id: str = Field(
        json_schema_extra=UUID_FORMAT, description="The 'problem' memory in whose context it helped (or not)"
    )
    vote: float = Field(ge=-1, le=1, description="Utility in [-1, 1]: 1 solved it, 0 neutral, -1 misleading")
    rationale: str | None = Field(default=None, max_length=2000)
    evidence_refs: list[str] | None = Field(default=None, max_length=20)
    mode: Mode = "commit"


class MemoryFeedbackOutput(ToolOutput):
    status: Literal["recorded", "dry_run"]
    memory_id: str
    problem_id: str
    vote: float
    votes_count: int = Field(description="Votes on this memory for this problem, including this one")
    mean_vote: float = Field(
        description="Mean of those votes: the memory's utility component in reads for this problem"
    )
    overall_votes_count: int = Field(description="Votes on this memory for any problem, including this one")
    overall_mean_vote: float = Field(
        description="Mean of those votes: its utility in reads with no votes for their problem"
    )


class NewMemory(ToolInput):
    content: str = Field(min_length=1, max_length=100_000)
    metadata: dict[str, Any] | None = None


class MemorySupersedeInput(ToolInput):
    old_fact_id: str = Field(json_schema_extra=UUID_FORMAT, description="The fact that no longer holds")
    new_fact: NewMemory | None = Field(default=None, description="The replacement fact, written now")
    new_fact_id: str | None = Field(
        default=None, json_schema_extra=UUID_FORMAT, description="Or an existing replacement fact"
    )
    change: NewMemory | None = Field(default=None, description="The change that invalidated the fact")
    change_id: str | None = Field(
        default=None, json_schema_extra=UUID_FORMAT, description="Or an existing change"
    )
    rationale: str | None = Field(default=None, max_length=2000)
    evidence_refs: list[str] | None = Field(default=None, max_length=20)
    mode: Mode = "commit"

    @model_validator(mode="after")
    def _one_of_each(self) -> MemorySupersedeInput:
        if (self.new_fact is None) == (self.new_fact_id is None):
            raise ValueError("give exactly one of 'new_fact' (to write it) or 'new_fact_id' (existing fact)")
        if (self.change is None) == (self.change_id is None):
            raise ValueError("give exactly one of 'change' (to write it) or 'change_id' (existing change)")
        return self


class PlannedEdge(ToolOutput):
    type: str
    source_id: str
    target_id: str


class MemorySupersedeOutput(ToolOutput):
    status: Literal["committed", "dry_run"]
    old_fact_id: str
    new_fact_id: str | None = Field(description="null in a dry run that would write the fact")
    change_id: str | None = Field(description="null in a dry run that would write the change")
    edges: list[PlannedEdge] = Field(default_factory=list)
    chain: list[str] = Field(
        default_factory=list, description="Fact ids from the oldest superseded fact to the newest"
    )
    effects: list[str] = Field(default_factory=list)
