"""Reference extraction: what a memory names, and which edge each kind of name becomes.

Pure functions, no store access (``linking`` resolves the names against the stores). A memory may
name, in its content or metadata:

* requirements, by id (``REQ-MEM-FN-080``): anywhere in the content, in
  ``metadata.related_requirements`` / ``metadata.requirements``, and in any other string value of
  the metadata except the memory's own ``requirement_id``;
* components, by ``component_id`` or name: ``metadata.component`` / ``metadata.components``, and a
  component's ``metadata.dependencies``;
* code: ``metadata.file_path``, ``metadata.files_touched``, a function memory's ``metadata.name``
  (with its ``file_path``), and backticked tokens in the content that look like a file path
  (``src/billing.py``), a ``path::QualifiedName`` pair, or a qualified name (``Ledger.post``,
  ``post_entry()``).

:data:`EDGE_RULES` maps (memory type, kind of target) to the edge type and its direction; see
docs/relationships.md for the table and the reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REQUIREMENT_ID = re.compile(r"\bREQ(?:-[A-Za-z0-9]+)+\b")
_BACKTICKED = re.compile(r"`([^`\s]{1,300})`")
_QUALIFIED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")
CODE_EXTENSIONS = (".py", ".pyi", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".go", ".rs", ".java", ".kt", ".rb")
_REQUIREMENT_LIST_KEYS = ("related_requirements", "requirements")
_COMPONENT_KEYS = ("component", "components")

REQUIREMENT, COMPONENT, CODE = "requirement", "component", "code"

# (memory type, target kind) -> (edge type, reversed). Not reversed: memory -> target; reversed:
# target -> memory, so that each edge reads as a sentence ("component FOLLOWS_PATTERN pattern").
EDGE_RULES: dict[tuple[str, str], tuple[str, bool]] = {
    ("requirements", REQUIREMENT): ("DEPENDS_ON", False),
    ("design", REQUIREMENT): ("SATISFIES", False),
    ("code_pattern", REQUIREMENT): ("IMPLEMENTS", False),
    ("component", REQUIREMENT): ("IMPLEMENTS", False),
    ("function", REQUIREMENT): ("IMPLEMENTS", False),
    ("test_history", REQUIREMENT): ("TESTS", False),
    ("requirements", COMPONENT): ("IMPLEMENTS", True),
    ("design", COMPONENT): ("DOCUMENTED_IN", True),
    ("code_pattern", COMPONENT): ("FOLLOWS_PATTERN", True),
    ("component", COMPONENT): ("DEPENDS_ON", False),
    ("test_history", COMPONENT): ("TESTS", False),
    ("requirements", CODE): ("IMPLEMENTS", True),
    ("design", CODE): ("DOCUMENTED_IN", True),
    ("code_pattern", CODE): ("FOLLOWS_PATTERN", True),
    ("component", CODE): ("CONTAINS", False),
    ("test_history", CODE): ("TESTS", False),
}
DEFAULT_RULE = ("RELATED_TO", False)


@dataclass(frozen=True)
class References:
    """Names found in one memory, each kind sorted and without duplicates."""

    requirements: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    units: tuple[str, ...] = ()  # "QualifiedName" or "path::QualifiedName"

    def __bool__(self) -> bool:
        return bool(self.requirements or self.components or self.files or self.units)


def edge_rule(memory_type: str, target_kind: str) -> tuple[str, bool]:
    """The edge type for a reference from a memory of this type, and whether it points back."""
    return EDGE_RULES.get((memory_type, target_kind), DEFAULT_RULE)


def requirement_ids(text: str) -> list[str]:
    """Requirement ids in a text, upper-cased, in order of first appearance."""
    return list(dict.fromkeys(m.upper() for m in REQUIREMENT_ID.findall(text)))


def extract(memory_type: str, content: str, metadata: dict[str, Any]) -> References:
    """Every reference a memory makes, its own identity (requirement_id, component_id) left out."""
    own = {str(metadata.get(k, "")).strip().lower() for k in ("requirement_id", "component_id")}
    if memory_type == "component":
        own.add(str(metadata.get("name", "")).strip().lower())
    reqs = requirement_ids(content)
    for key, value in sorted(metadata.items()):
        if key not in ("requirement_id", "component_id"):
            reqs += requirement_ids(" ".join(_strings(value)))
    components = [s for k in _COMPONENT_KEYS for s in _strings(metadata.get(k))]
    if memory_type == "component":
        components += _strings(metadata.get("dependencies"))
    files = _strings(metadata.get("file_path")) + _strings(metadata.get("files_touched"))
    units: list[str] = []
    if memory_type == "function" and isinstance(metadata.get("name"), str):
        path = metadata.get("file_path")
        units.append(f"{path}::{metadata['name']}" if isinstance(path, str) and path else metadata["name"])
    for token in _BACKTICKED.findall(content):
        kind, name = classify_code_token(token)
        if kind == "file":
            files.append(name)
        elif kind == "unit" and not REQUIREMENT_ID.fullmatch(name):
            units.append(name)
    return References(
        requirements=_clean(r for r in reqs if r.lower() not in own),
        components=_clean(c for c in components if c.strip().lower() not in own),
        files=_clean(f.strip().removeprefix("./") for f in files),
        units=_clean(units),
    )


def classify_code_token(token: str) -> tuple[str | None, str]:
    """``("file", path)``, ``("unit", name)`` or ``(None, token)`` for a backticked token."""
    token = token.strip().rstrip(".,;:")
    if "::" in token:
        path, _, name = token.partition("::")
        name = name.split("#", 1)[0].removesuffix("()")
        if path and _QUALIFIED.match(name):
            return "unit", f"{path}::{name}"
        return None, token
    if token.endswith(CODE_EXTENSIONS) and ("/" in token or token.count(".") == 1):
        return "file", token
    if _QUALIFIED.match(token) and ("." in token or token.endswith("()")):
        return "unit", token.removesuffix("()")
    return None, token


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _clean(values: Any) -> tuple[str, ...]:
    return tuple(sorted({v.strip() for v in values if v and v.strip()}))
