"""validate_fix: a proposed fix against its component's requirements, decisions and patterns.

Deterministic lexical rules, no model. A *removal phrase* is a removal verb (remove, delete,
drop, disable, replace, bypass, skip, revert...) and the up to five words after it. Concerns:

* ``foreign_file`` (high): an affected file belongs to another component (it CONTAINS it, or it
  is that component's metadata.file_path) and not to this one; ``outside_component`` (low): it
  belongs to no component;
* ``contradicts_decision`` (high): a removal phrase names a term of an accepted design memory
  (metadata.status accepted/approved) documenting the component: a word of its title, or a
  backticked or hyphenated term of its content;
* ``removes_required_behaviour`` (high): a removal phrase names a term of the title of a
  requirement of the component (or its id);
* ``departs_from_pattern`` (medium): a removal phrase names a term of a pattern it follows;
* ``no_design_reference`` (low): the fix names none of the component's requirement ids, files
  or design terms while it has some.

alignment_score = max(0, 1 - 0.3 per high - 0.15 per medium - 0.05 per low concern).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory_service.core.graph.consistency_schemas import (
    Concern,
    FixDesignContext,
    ValidateFixInput,
    ValidateFixOutput,
)
from memory_service.core.graph.design_context import DesignContextService, component_code
from memory_service.core.graph.down import needs_graph
from memory_service.core.graph.lookup import find_component, load_records
from memory_service.core.graph.trace_schemas import DesignContextInput
from memory_service.core.models import MemoryRecord, MemoryType
from memory_service.core.ports import GraphStore, VectorStore

PENALTY = {"high": 0.3, "medium": 0.15, "low": 0.05}
ACCEPTED = frozenset({"accepted", "approved"})
REMOVAL = re.compile(
    r"\b(remov\w*|delet\w*|drop\w*|disabl\w*|replac\w*|bypass\w*|skip\w*|revert\w*|eliminat\w*|"
    r"get rid of|stop(?:s|ped)? using|turn(?:s|ed)? off|no longer)\b",
    re.IGNORECASE,
)
WINDOW = 5
# fmt: off
STOPWORDS = frozenset((
    "the", "a", "an", "and", "or", "of", "to", "for", "in", "on", "at", "by", "with", "from", "into",
    "that", "this", "these", "those", "is", "are", "be", "it", "its", "as", "all", "any", "each",
    "every", "use", "uses", "using", "so", "when", "then", "than", "not", "no", "must", "should",
    "will", "can", "may", "adr", "component", "components", "code", "requirement", "requirements",
    "design", "pattern", "patterns", "entries", "entry",
))
# fmt: on


class FixValidationService:
    def __init__(self, vectors: VectorStore, graph: GraphStore) -> None:
        self._vectors = vectors
        self._graph = graph
        self._design = DesignContextService(vectors, graph)

    @needs_graph("validate_fix")
    def validate(self, request: ValidateFixInput) -> ValidateFixOutput:
        """Raises: NotFoundError (NF_COMPONENT) when no component has that id or name."""
        comp, catalog = find_component(self._vectors, request.component_id)
        ctx = self._design.context(DesignContextInput(component_id=comp.id))
        ids = [r.memory_id for r in ctx.requirements] + [d.memory_id for d in ctx.design_documents]
        records = load_records(self._vectors, ids + [p.memory_id for p in ctx.patterns])
        text = request.fix_description
        removed = _removal_phrases(text)
        concerns = self._file_concerns(comp, catalog.records.values(), request.affected_files)
        for d in ctx.design_documents:
            m = records.get(d.memory_id)
            if m is None or str(m.metadata.get("status", "")).lower() not in ACCEPTED:
                continue
            hit = _named(removed, _terms(m.title or "") | _marked_terms(m.content))
            if hit:
                concerns.append(Concern(
                    type="contradicts_decision", severity="high",
                    message=f"The fix removes '{hit}', which accepted decision '{m.title}' mandates",
                    related_decision=m.id, related_requirement=_first_requirement(m),
                ))  # fmt: skip
        for r in ctx.requirements:
            req_terms = _terms(r.title or "") | ({r.requirement_id.lower()} if r.requirement_id else set())
            hit = _named(removed, req_terms)
            if hit:
                concerns.append(Concern(
                    type="removes_required_behaviour", severity="high",
                    message=f"The fix removes '{hit}', which requirement '{r.title}' needs",
                    related_requirement=r.requirement_id or r.memory_id,
                ))  # fmt: skip
        for p in ctx.patterns:
            m = records.get(p.memory_id)
            hit = _named(removed, _terms(p.name) | (_marked_terms(m.content) if m else set()))
            if hit:
                concerns.append(Concern(
                    type="departs_from_pattern", severity="medium",
                    message=f"The fix removes '{hit}', part of pattern '{p.name}'",
                    related_decision=p.memory_id,
                ))  # fmt: skip
        anchors = {r.requirement_id.lower() for r in ctx.requirements if r.requirement_id}
        anchors |= {f.lower() for f in ctx.component.get("files", [])} | set(request.affected_files)
        for m in records.values():
            anchors |= _terms(m.title or "") | _marked_terms(m.content)
        if (
            anchors
            and not (set(request.affected_files) & set(ctx.component.get("files", [])))
            and not (anchors & _terms(text, keep_ids=True))
        ):
            concerns.append(Concern(
                type="no_design_reference", severity="low",
                message="The fix names none of the component's requirement ids, files or design terms",
            ))  # fmt: skip
        score = round(max(0.0, 1.0 - sum(PENALTY[c.severity] for c in concerns)), 3)
        counts = {s: sum(1 for c in concerns if c.severity == s) for s in PENALTY}
        accepted = sum(1 for d in ctx.design_documents if _accepted(records.get(d.memory_id)))
        basis = (
            f"{len(removed)} removal phrase(s) checked against {len(ctx.requirements)} requirement(s), "
            f"{accepted} accepted decision(s) "
            f"and {len(ctx.patterns)} pattern(s); {len(request.affected_files)} affected file(s) checked for "
            f"ownership; alignment_score = 1 - 0.3*{counts['high']} - 0.15*{counts['medium']} "
            f"- 0.05*{counts['low']} = {score} (floored at 0)"
        )
        return ValidateFixOutput(
            alignment_score=score,
            design_context=FixDesignContext(
                requirements=ctx.requirements, design_documents=ctx.design_documents, patterns=ctx.patterns
            ),
            concerns=concerns,
            recommendations=_recommendations(concerns),
            basis=basis,
        )

    def _file_concerns(
        self, comp: MemoryRecord, records: Iterable[MemoryRecord], affected: list[str]
    ) -> list[Concern]:
        if not affected:
            return []
        owners: dict[str, MemoryRecord] = {}
        for m in sorted(records, key=lambda r: r.id):
            if m.type != MemoryType.COMPONENT:
                continue
            files = component_code(self._graph, m.id)[0]
            if m.metadata.get("file_path"):
                files.add(str(m.metadata["file_path"]))
            for f in files:
                if m.id == comp.id or f not in owners:
                    owners[f] = m
        out = []
        for path in affected:
            owner = owners.get(path.strip().lstrip("./"))
            if owner is None:
                out.append(Concern(
                    type="outside_component", severity="low",
                    message=f"{path} belongs to no known component",
                ))  # fmt: skip
            elif owner.id != comp.id:
                cid = str(owner.metadata.get("component_id") or owner.metadata.get("name") or owner.id)
                out.append(Concern(
                    type="foreign_file", severity="high",
                    message=f"{path} belongs to component '{cid}', not to this one",
                    related_component=cid,
                ))  # fmt: skip
        return out


def _removal_phrases(text: str) -> list[str]:
    phrases = []
    for match in REMOVAL.finditer(text):
        words = re.findall(r"[\w`./:-]+", text[match.end() :])[:WINDOW]
        phrases.append(" ".join(words).lower())
    return phrases


def _terms(text: str, keep_ids: bool = False) -> set[str]:
    """Significant words: 4+ letters, not stopwords, backticks and trailing punctuation stripped."""
    words = {w.strip("`.,;:()'\"").lower() for w in re.findall(r"[\w`./-]+", text)}
    return {w for w in words if (len(w) >= 4 or keep_ids) and w not in STOPWORDS and not w.isdigit()}


def _marked_terms(content: str) -> set[str]:
    """Terms a document stresses: backticked tokens and hyphenated words (``double-entry``)."""
    ticked = {t.lower() for t in re.findall(r"`([^`]+)`", content)}
    return ticked | {
        h.lower() for h in re.findall(r"\b\w+(?:-\w+)+\b", content) if not h.upper().startswith("REQ-")
    }


def _named(phrases: list[str], terms: set[str]) -> str | None:
    """The first term a removal phrase names (whole words), if any."""
    for phrase in phrases:
        words = _terms(phrase, keep_ids=True)
        for term in sorted(terms, key=lambda t: (-len(t), t)):
            if term in words or (" " in term and term in phrase):
                return term
    return None


def _accepted(m: MemoryRecord | None) -> bool:
    return m is not None and str(m.metadata.get("status", "")).lower() in ACCEPTED


def _first_requirement(m: MemoryRecord) -> str | None:
    found = re.findall(
        r"\bREQ(?:-[A-Za-z0-9]+)+", f"{m.content} {m.metadata.get('related_requirements', '')}"
    )
    return found[0].upper() if found else None


def _recommendations(concerns: list[Concern]) -> list[str]:
    texts = {
        "foreign_file": "Coordinate with the owner of the other component, or move the change into this one.",
        "outside_component": (
            "Say which component owns the new or unowned file (a component's metadata.file_path)."
        ),
        "contradicts_decision": (
            "Keep what the accepted decision mandates, or supersede the decision with a new ADR first."
        ),
        "removes_required_behaviour": (
            "Keep the behaviour the requirement needs, or change the requirement first."
        ),
        "departs_from_pattern": "Follow the component's pattern, or record why this case differs.",
        "no_design_reference": "Name the requirement(s) the fix serves and the files it touches.",
    }
    out = [texts[c.type] for c in concerns]
    return list(dict.fromkeys(out)) or ["The fix raises no concern against the component's design context."]
