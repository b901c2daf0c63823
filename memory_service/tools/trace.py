"""Traceability tools (seed 001 §4.2.4): a requirement's trace, a component's design context."""

from __future__ import annotations

from memory_service.core.graph.trace_schemas import (
    DesignContextInput,
    DesignContextOutput,
    TraceRequirementsInput,
    TraceRequirementsOutput,
)
from memory_service.tools.registry import READ_ONLY, ToolSpec

TRACE_TOOLS = [
    ToolSpec(
        name="trace_requirements",
        title="Trace a requirement",
        description=(
            "Trace a requirement (its id such as REQ-MEM-FN-080, from the requirement memory's "
            "metadata.requirement_id, or its memory id) to what implements it (memories and code "
            "linked by IMPLEMENTS/SATISFIES, and indexed code whose docstring names the id), its "
            "design documents, and its tests with their latest status (test_history memories "
            "linked by TESTS, test functions naming the id). coverage.implementation is 1.0 when "
            "indexed code implements it, 0.5 when only memories claim it; coverage.testing is the "
            "share of tests that passed; completeness weighs them 0.4/0.4 plus 0.2 for a design "
            "document, and basis says what was counted. Links are made when memories are written: "
            "see docs/relationships.md."
        ),
        schema_model=TraceRequirementsInput,
        output_model=TraceRequirementsOutput,
        handler=lambda s, r: s.trace.trace(r),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="get_design_context",
        title="Get a component's design context",
        description=(
            "Everything known about one component (a component memory, by metadata.component_id, "
            "name or memory id; else an indexed file, module or directory, whose requirements are those "
            "its code implements, with the decisions linked to them): its requirements, design "
            "documents (with excerpts), the patterns it "
            "follows (with their usage context), the components it depends on and those depending "
            "on it (DEPENDS_ON links, and CALLS/IMPORTS between its indexed code and theirs), and "
            "with include_code the signatures of its code from the code index."
        ),
        schema_model=DesignContextInput,
        output_model=DesignContextOutput,
        handler=lambda s, r: s.design.context(r),
        annotations=READ_ONLY,
    ),
]
