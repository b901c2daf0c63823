"""Design-conformance tools (seed 001 §4.2.4): a component against its pattern, a fix against its design."""

from __future__ import annotations

from memory_service.core.graph.consistency_schemas import (
    CheckConsistencyInput,
    CheckConsistencyOutput,
    ValidateFixInput,
    ValidateFixOutput,
)
from memory_service.tools.registry import READ_ONLY, ToolSpec

CONSISTENCY_TOOLS = [
    ToolSpec(
        name="check_consistency",
        title="Check a component against its pattern",
        description=(
            "Compare a component's indexed code (what its component memory CONTAINS) with its base "
            "pattern: the code_pattern memory it FOLLOWS_PATTERN, whose reference code is the code the "
            "pattern names or else the code of sibling components following it. Checks that each "
            "expected function/method is present, has the pattern's parameter names and decorators, "
            "that classes extend the pattern's bases, and naming (snake_case in Python, camelCase in "
            "TypeScript/JavaScript, PascalCase classes). consistency_score = checks passed / checks "
            "made; deviations give expected vs actual with a severity; basis shows the tally. "
            "Deterministic, no model."
        ),
        schema_model=CheckConsistencyInput,
        output_model=CheckConsistencyOutput,
        handler=lambda s, r: s.consistency.check(r),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="validate_fix",
        title="Validate a proposed fix against the design",
        description=(
            "Check a fix description (and the files it touches) against a component's requirements, "
            "accepted decisions (design memories with metadata.status accepted/approved) and patterns. "
            "Concerns: a file owned by another component, a fix that removes/disables/replaces a term an "
            "accepted decision or a requirement's title names, or departs from a pattern, and a fix "
            "naming no requirement, file or design term. alignment_score = 1 - 0.3 per high - 0.15 per "
            "medium - 0.05 per low concern; basis explains it. Deterministic lexical rules, no model."
        ),
        schema_model=ValidateFixInput,
        output_model=ValidateFixOutput,
        handler=lambda s, r: s.fix.validate(r),
        annotations=READ_ONLY,
    ),
]
