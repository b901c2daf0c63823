"""Scopes (seed 004 FR-017..021): where a memory belongs, and which memories a read sees.

Six levels: org, project, service, branch, sprint, tenant. A write's scope is the caller's
(settings: git remote → org/project, repo root → project, current branch → branch; ``MEMORY_*``
overrides) with the levels the call gives on top; outside git without ``MEMORY_PROJECT`` the
folder the server started in names the project, as it names the data directory
(:class:`ProjectOrigin` says which rule applied). Preferences are project-wide by default (no
branch), and ``"branch": null`` makes any memory project-wide. A write needs a project: one whose
call sets ``"project": null`` is refused (VAL_INVALID_SCOPE).

Reads see the caller's {org, project, branch} by default (branch isolation) plus the project-wide
memories; a read's ``scope`` widens or moves that: ``{"branch": "main"}`` reads main,
``{"branch": "*"}`` every branch of the project, ``{"project": "*"}`` every project (the levels
under a widened one widen with it unless given). service, sprint and tenant narrow a read only
when given (or set in settings). In the vector payload a level without a value is ``""``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from memory_service.core.errors import ValidationError
from memory_service.core.models import Scope
from memory_service.core.schema_base import ToolInput

SCOPE_FILTER_FIELDS = ("project", "branch", "org", "service", "sprint", "tenant")
WILDCARD = "*"
# The reserved project of memories shared by every repository (seed 002's ``scope: "global"``):
# a read names it in ``extra_projects`` (SearchService.search) to see them beside its own project's.
GLOBAL_PROJECT = "_global"
PROJECT_WIDE_TYPES = frozenset({"user_preference", "preference"})
_VALUE = Field(default=None, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")
# Which levels a level needs: a tenant belongs to an org; the others hang off the project.
_NEEDS = {"tenant": "org", "service": "project", "branch": "project", "sprint": "project"}
# A tenant is named within one org: a read of a tenant across every org ('*' or null) is as
# malformed as a write without one. (A branch across every project, {"project": "*", "branch":
# "main"}, is a read that means something.)
_NEEDS_NAMED = frozenset({"tenant"})


class ScopeInput(ToolInput):
    """Scope levels a call gives. Writes: values to store (null: none). Reads: '*' or null widens."""

    org: str | None = _VALUE
    project: str | None = _VALUE
    service: str | None = _VALUE
    branch: str | None = _VALUE
    sprint: str | None = _VALUE
    tenant: str | None = _VALUE


# project and branch have an indexed payload field each; the other levels (and the dedupe key,
# core/write/dedupe.py) share one indexed list of "level=value" facets: every indexed field costs each
# write's flush, and these are rarely asked for.
FACETS = "facets"
FACET_LEVELS = ("org", "service", "sprint", "tenant")


def facet(level: str, value: str) -> str:
    return f"{level}={value}"


def scope_payload(scope: Scope) -> dict[str, Any]:
    """The flat, indexed payload copies filters use ("" for a level without a value)."""
    return {
        "project": scope.project or "",
        "branch": scope.branch or "",
        FACETS: [facet(level, getattr(scope, level) or "") for level in FACET_LEVELS],
    }


def filter_parts(
    conditions: dict[str, list[str]],
) -> tuple[dict[str, list[str]], tuple[tuple[str, list[str]], ...]]:
    """:func:`read_conditions` as PayloadFilter parts: ``any_of`` for project and branch, and one
    ``also_any`` condition on the facets per other level."""
    any_of = {level: values for level, values in conditions.items() if level not in FACET_LEVELS}
    also = tuple(
        (FACETS, [facet(level, v) for v in values])
        for level, values in conditions.items()
        if level in FACET_LEVELS
    )
    return any_of, also


def invalid_scope(message: str, field: str, suggestion: str, **details: Any) -> ValidationError:
    return ValidationError(
        message, code="VAL_INVALID_SCOPE", details={"field": field, **details}, suggestion=suggestion
    )


def no_project(field: str) -> ValidationError:
    return invalid_scope(
        "No project scope: a memory belongs to a project, and this call set none",
        field,
        "Give scope.project a name, or leave it out to use the server's project (memory_statistics "
        "names it; MEMORY_PROJECT in the server's environment sets it).",
    )


def resolve_write(given: ScopeInput | None, caller: Scope, memory_type: str, *, field: str) -> Scope:
    """The scope a new memory is stored with; VAL_INVALID_SCOPE when it is incomplete or malformed."""
    values: dict[str, str | None] = caller.model_dump()
    if memory_type in PROJECT_WIDE_TYPES:
        values["branch"] = None
    if given is not None:
        for level in given.model_fields_set:
            value = getattr(given, level)
            if value == WILDCARD:
                raise invalid_scope(
                    f"'{WILDCARD}' is not a value a memory can be stored with ({field}.{level})",
                    f"{field}.{level}",
                    f"'{WILDCARD}' widens reads only: give {level} a name, or null for none.",
                    provided=value,
                )
            values[level] = value.strip() if value else None
    if not values["project"]:
        raise no_project(f"{field}.project")
    check_shape(values, field)
    return Scope(**values)


def check_shape(values: dict[str, str | None], field: str) -> None:
    """A tenant needs an org (seed 004's malformed-scope case), in writes and reads alike: a read's
    org widened to every org ('*' or null) is no org; sub-levels need a project."""
    for level, parent in _NEEDS.items():
        value, above = values.get(level), values.get(parent)
        if not value or value == WILDCARD:
            continue
        if not above or (above == WILDCARD and level in _NEEDS_NAMED):
            raise invalid_scope(
                f"Malformed scope: '{level}' is set but '{parent}' is not"
                + (f" (a {level} is named within one {parent}, not '{WILDCARD}')" if above else ""),
                f"{field}.{level}",
                f"Give scope.{parent} too (a {level} belongs to a {parent}), or drop scope.{level}.",
                provided={k: v for k, v in values.items() if v},
            )


def read_conditions(given: ScopeInput | None, caller: Scope, *, field: str = "scope") -> dict[str, list[str]]:
    """Payload conditions (field → accepted values) of a scoped read; an absent field: any value.

    Each level accepts its value and "" (memories without that level, e.g. project-wide ones);
    the project must match exactly.
    """
    wanted: dict[str, str | None] = caller.model_dump()
    given_levels = given.model_fields_set if given is not None else set()
    for level in given_levels:
        value = getattr(given, level)
        wanted[level] = WILDCARD if value is None else value.strip()
    for upper, lower in (("org", "project"), ("project", "branch")):
        if wanted[upper] == WILDCARD and lower not in given_levels:
            wanted[lower] = WILDCARD
    if given is not None:
        check_shape(wanted, field)
    if wanted["project"] is None:
        raise no_project(f"{field}.project")
    conditions: dict[str, list[str]] = {}
    for level in SCOPE_FILTER_FIELDS:
        value = wanted[level]
        if value is None or value == WILDCARD:
            continue
        conditions[level] = [value] if level == "project" else [value, ""]
    return conditions


class CallerScope:
    """The caller's scope, read when a call needs it: the configured levels, and the branch the
    project's checkout is on now (a ``git checkout`` under a running server moves new memories and
    default reads to the new branch). ``branch_probe`` is asked at most every ``ttl`` seconds."""

    def __init__(
        self, base: Scope, branch_probe: Callable[[], str | None] | None = None, *, ttl: float = 2.0
    ) -> None:
        self._base = base
        self._probe = branch_probe
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cached: tuple[float, Scope] | None = None

    def current(self) -> Scope:
        if self._probe is None:
            return self._base
        with self._lock:
            now = time.monotonic()
            if self._cached is None or now - self._cached[0] >= self._ttl:
                branch = self._probe()
                scope = self._base.model_copy(update={"branch": branch}) if branch else self._base
                self._cached = (now, scope)
            return self._cached[1]


def fixed(scope: Scope | CallerScope) -> CallerScope:
    return scope if isinstance(scope, CallerScope) else CallerScope(scope)


_BECAUSE = {
    "setting": "set by MEMORY_PROJECT",
    "git remote": "named by the origin remote of the git repository at {root}",
    "git folder": "named after the git repository's folder {root}",
    "folder": "no git repository and no MEMORY_PROJECT: named after the folder the server started "
    "in ({root}), as its data directory is",
    "default": "no git repository, no MEMORY_PROJECT and no folder name to use ({root})",
}


@dataclass(frozen=True)
class ProjectOrigin:
    """The caller's project and why (settings' ``project_source``): memory_statistics shows it,
    and when it was only inferred from a folder, the first write warns once (:meth:`notice`)."""

    name: str
    source: str
    root: str

    @property
    def reason(self) -> str:
        return _BECAUSE.get(self.source, self.source).format(root=self.root)

    @property
    def inferred(self) -> bool:
        """Whether no git repository nor setting named the project."""
        return self.source in ("folder", "default")

    def notice(self) -> Notice:
        if not self.inferred:
            return Notice(None)
        return Notice(
            f"Stored in project '{self.name}': {self.reason}. Set MEMORY_PROJECT in the server's "
            "environment (or start it in the project's git repository) to name another.",
            self.name,
        )


class Notice:
    """A warning about ``project`` given once, to the first answer that asks for it (thread-safe)."""

    def __init__(self, message: str | None, project: str | None = None) -> None:
        self._message = message
        self._project = project
        self._lock = threading.Lock()

    def take(self, project: str | None = None) -> list[str]:
        """The warning, the first time; [] after, and for a write stored in another ``project``."""
        if project is not None and project != self._project:
            return []
        with self._lock:
            message, self._message = self._message, None
        return [message] if message else []
