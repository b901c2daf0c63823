"""check_consistency: a component's code against the pattern it follows. Deterministic, no model.

The base pattern is a code_pattern memory the component FOLLOWS_PATTERN (docs/relationships.md).
Its reference code is the code that follows the pattern directly (files and units the pattern
names), else the code of the sibling components following it; the component's own files never
count as reference. A member (function or method) is expected when it is in at least half of the
reference files. Checks, each passed or failed:

* presence: each expected member exists in the component (matched by style-free name, so
  ``getItem`` matches ``get_item``); a missing one is a ``high`` deviation;
* signature: a present member has the reference's parameter names (``medium``);
* decorators: a present member carries the reference's decorators (``medium``);
* base classes: each component class extends the bases all reference classes share (``medium``);
  a component with no class where the reference has one fails a presence check;
* naming: each component unit follows its language's convention (snake_case for Python,
  camelCase for TypeScript/JavaScript, PascalCase for classes) and a matched member has the
  reference's exact name (``low``).

consistency_score = checks passed / checks made (1.0 when nothing could be checked); members the
pattern lacks are ``info`` deviations and do not count. ``basis`` spells the tally out.
"""

from __future__ import annotations

from typing import Any

from memory_service.core.code import shape
from memory_service.core.code.records import CODE_COLLECTIONS, FILE_LABEL
from memory_service.core.graph.consistency_schemas import (
    BasePattern,
    CheckConsistencyInput,
    CheckConsistencyOutput,
    ComponentRef,
    Deviation,
)
from memory_service.core.graph.design_context import MAX_UNITS, UNIT_LABELS, component_code
from memory_service.core.graph.down import needs_graph
from memory_service.core.graph.lookup import find_component, load_records
from memory_service.core.models import MemoryRecord, MemoryType
from memory_service.core.ports import GraphStore, PayloadFilter, VectorStore
from memory_service.core.records import MEMORY_LABEL

Unit = dict[str, Any]
CATEGORIES = ("presence", "signature", "decorators", "base classes", "naming")


class ConsistencyService:
    def __init__(self, vectors: VectorStore, graph: GraphStore) -> None:
        self._vectors = vectors
        self._graph = graph

    @needs_graph("check_consistency")
    def check(self, request: CheckConsistencyInput) -> CheckConsistencyOutput:
        """Raises: NotFoundError (NF_COMPONENT) when no component has that id or name."""
        comp, _ = find_component(self._vectors, request.component_id)
        own_files = component_code(self._graph, comp.id)[0]
        own = self._units(own_files)
        base, ref_files = self._base_pattern(comp, own_files)
        check = _Check()
        if not own:
            check.deviation("no_code", "indexed code CONTAINed by the component", "none", "high", None)
        _compare(check, own, self._units(ref_files) if ref_files else [], len(ref_files))
        return CheckConsistencyOutput(
            component=_component_ref(comp),
            base_pattern=base,
            consistency_score=check.score(),
            deviations=check.deviations,
            recommendations=_recommendations(check.deviations, base),
            basis=check.basis(base, len(ref_files)),
        )

    def _base_pattern(self, comp: MemoryRecord, own_files: set[str]) -> tuple[BasePattern | None, list[str]]:
        """The first pattern (by name) with reference code, else the first pattern, and its files."""
        near = self._graph.related(MEMORY_LABEL, comp.id, ["FOLLOWS_PATTERN"], "OUTGOING", 1, limit=50)
        records = load_records(self._vectors, [e.id for e in near if e.label == MEMORY_LABEL])
        patterns = sorted(
            (m for m in records.values() if m.type == MemoryType.CODE_PATTERN),
            key=lambda m: (_title(m), m.id),
        )
        first: tuple[BasePattern | None, list[str]] = (None, [])
        for pattern in patterns:
            followers = self._graph.related(
                MEMORY_LABEL, pattern.id, ["FOLLOWS_PATTERN"], "INCOMING", 1, limit=200
            )
            files = {e.id for e in followers if e.label == FILE_LABEL}
            files |= {str(e.properties["file_path"]) for e in followers if e.label in UNIT_LABELS}
            source = "pattern code"
            if not files - own_files:
                source = "sibling components"
                for e in followers:
                    if e.label == MEMORY_LABEL and e.id != comp.id:
                        files |= component_code(self._graph, e.id)[0]
            ref = sorted(files - own_files)
            base = BasePattern(
                name=_title(pattern),
                file_path=ref[0] if ref else None,
                memory_id=pattern.id,
                source=source,
                reference_files=ref,
            )
            if ref:
                return base, ref
            first = first if first[0] else (base, [])
        return first

    def _units(self, files: set[str] | list[str]) -> list[Unit]:
        units: list[Unit] = []
        for name in CODE_COLLECTIONS:
            for path in sorted(files):
                points, _ = self._vectors.scroll(
                    name, PayloadFilter(equals={"file_path": path}), limit=MAX_UNITS
                )
                units += [p.payload for p in points]
        return sorted(units, key=lambda u: (u["file_path"], u.get("start_line") or 0, u["qualified_name"]))


class _Check:
    def __init__(self) -> None:
        self.tally = {c: [0, 0] for c in CATEGORIES}
        self.deviations: list[Deviation] = []

    def record(self, category: str, ok: bool) -> None:
        self.tally[category][1] += 1
        self.tally[category][0] += int(ok)

    def deviation(self, kind: str, expected: str, actual: str, severity: str, unit: str | None) -> None:
        self.deviations.append(
            Deviation(type=kind, expected=expected, actual=actual, severity=severity, unit=unit)
        )

    def score(self) -> float:
        passed, total = (sum(t[i] for t in self.tally.values()) for i in (0, 1))
        return round(passed / total, 3) if total else 1.0

    def basis(self, base: BasePattern | None, n_ref: int) -> str:
        passed, total = (sum(t[i] for t in self.tally.values()) for i in (0, 1))
        where = f"pattern '{base.name}' ({base.source}, {n_ref} reference file(s))" if base else "no pattern"
        parts = ", ".join(f"{c} {p}/{t}" for c, (p, t) in self.tally.items() if t)
        return (
            f"Against {where}: {parts or 'nothing to check'}; consistency_score = {passed}/{total} checks "
            f"passed = {self.score()} (1.0 when nothing is checked; info deviations do not count)"
        )


def _compare(check: _Check, own: list[Unit], ref: list[Unit], n_ref_files: int) -> None:
    members = [u for u in own if u.get("kind") != "class"]
    by_key = {shape.normalized(shape.member_key(u["qualified_name"])): u for u in reversed(members)}
    matched: dict[str, Unit] = {}  # component unit_id -> reference unit
    for key, r in _expected(ref, n_ref_files).items():
        c = by_key.get(key)
        check.record("presence", c is not None)
        if c is None:
            where = f"{r['file_path']}: {r['signature']}"
            check.deviation("missing_member", where, "absent", "high", r["qualified_name"])
            continue
        matched[c["unit_id"]] = r
        want, got = shape.parameters(r["signature"]), shape.parameters(c["signature"])
        check.record("signature", want == got)
        if want != got:
            check.deviation(
                "signature", f"({', '.join(want)})", f"({', '.join(got)})", "medium", c["qualified_name"]
            )
        needed = set(shape.decorators(r["signature"]))
        if needed:
            have = set(shape.decorators(c["signature"]))
            check.record("decorators", needed <= have)
            if not needed <= have:
                check.deviation("decorator", _at(needed), _at(have) or "none", "medium", c["qualified_name"])
    _compare_classes(check, own, ref)
    for u in own:
        _check_name(check, u, matched.get(u["unit_id"]))
        if u.get("kind") != "class" and ref and u["unit_id"] not in matched:
            check.deviation("extra_member", "not in the pattern", u["signature"], "info", u["qualified_name"])


def _expected(ref: list[Unit], n_files: int) -> dict[str, Unit]:
    """Members in at least half of the reference files, by style-free name, first occurrence kept."""
    files: dict[str, set[str]] = {}
    first: dict[str, Unit] = {}
    for u in ref:
        if u.get("kind") == "class":
            continue
        key = shape.normalized(shape.member_key(u["qualified_name"]))
        files.setdefault(key, set()).add(u["file_path"])
        first.setdefault(key, u)
    return {k: first[k] for k in first if 2 * len(files[k]) >= n_files}


def _compare_classes(check: _Check, own: list[Unit], ref: list[Unit]) -> None:
    ref_classes = [u for u in ref if u.get("kind") == "class"]
    own_classes = [u for u in own if u.get("kind") == "class"]
    if not ref_classes:
        return
    if not own_classes:
        check.record("presence", False)
        check.deviation(
            "missing_member", f"a class like {ref_classes[0]['signature']}", "no class", "high", None
        )
        return
    shared = set.intersection(*(set(shape.bases(u["signature"])) for u in ref_classes))
    decorated = set.intersection(*(set(shape.decorators(u["signature"])) for u in ref_classes))
    for c in own_classes:
        if shared:
            have = set(shape.bases(c["signature"]))
            check.record("base classes", shared <= have)
            if not shared <= have:
                expected = f"extends {', '.join(sorted(shared))}"
                check.deviation(
                    "base_class",
                    expected,
                    ", ".join(sorted(have)) or "no base",
                    "medium",
                    c["qualified_name"],
                )
        if decorated:
            have = set(shape.decorators(c["signature"]))
            check.record("decorators", decorated <= have)
            if not decorated <= have:
                check.deviation(
                    "decorator", _at(decorated), _at(have) or "none", "medium", c["qualified_name"]
                )


def _check_name(check: _Check, unit: Unit, ref: Unit | None) -> None:
    name = shape.member_key(unit["qualified_name"])
    rule = shape.naming_rule(str(unit.get("kind")), str(unit.get("language")))
    if ref is not None and shape.member_key(ref["qualified_name"]) != name:
        expected = f"{shape.member_key(ref['qualified_name'])} (the pattern's name)"
    elif rule is not None and not rule[1].match(name):
        expected = f"{rule[0]} for a {unit.get('language')} {unit.get('kind')}"
    elif rule is None and ref is None:
        return
    else:
        check.record("naming", True)
        return
    check.record("naming", False)
    check.deviation("naming", expected, name, "low", unit["qualified_name"])


def _recommendations(deviations: list[Deviation], base: BasePattern | None) -> list[str]:
    if base is None:
        return [
            "No code_pattern memory applies: write one naming this component in metadata.component "
            "and the reference code in backticks (docs/relationships.md), then check again."
        ]
    texts = {
        "no_code": "Index the component's code and name its files in metadata.file_path so it CONTAINS them.",
        "missing_member": "Add {unit} as the pattern has it: {expected}.",
        "signature": "Give {unit} the pattern's parameters {expected} (now {actual}).",
        "decorator": "Decorate {unit} with {expected}.",
        "base_class": "Make {unit} {expected}.",
        "naming": "Rename {unit} to follow {expected}.",
    }
    out = [texts[d.type].format(**d.model_dump()) for d in deviations if d.type in texts]
    if not out and not base.reference_files:
        out.append(
            f"Pattern '{base.name}' names no code and no other component follows it: name its reference code."
        )
    return list(dict.fromkeys(out))


def _component_ref(m: MemoryRecord) -> ComponentRef:
    meta = m.metadata
    kind, path = meta.get("component_type"), meta.get("file_path")
    return ComponentRef(
        name=m.title,
        type=str(kind) if kind else None,
        file_path=str(path) if path else None,
        component_id=str(meta.get("component_id") or meta.get("name") or m.id),
        memory_id=m.id,
    )


def _title(m: MemoryRecord) -> str:
    return str(m.title or m.metadata.get("pattern_name") or m.id)


def _at(names: set[str]) -> str:
    return " ".join(f"@{n}" for n in sorted(names))
