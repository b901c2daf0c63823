"""Cross-file name resolution: call and base-class names → unit ids.

A parse sees one file, so its CALLS and INHERITS edges carry only a name. Once the caller has
every `FileIndex` of a project, these helpers pick a target by simple name, in tiers that trade
recall for precision: the same file, then files the caller imports (and, for Go and Java, the
same package directory), then a unique definition anywhere in the project. Ambiguous or unknown
names (``len``, ``append``, library calls) are dropped rather than guessed: a missing edge costs
less than a wrong one in a traceability graph.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Collection, Iterable

from indexer.models import CodeRelation, CodeUnit, FileIndex, RelationType, UnitKind

_SEPARATORS = re.compile(r"(?:::|[./\\])+")
_RUST_PREFIXES = ("crate/", "self/", "super/")
_PATH_IMPORTS = frozenset({"go", "javascript", "typescript", "tsx", "c", "cpp"})
_PACKAGE_IS_DIRECTORY = frozenset({"go", "java"})
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib"})


def resolve_calls(files: list[FileIndex], only: Collection[str] | None = None) -> list[CodeRelation]:
    """Resolved CALLS edges (with `target_id`) for every call name that names a project unit.

    `only` limits the edges to those made by the files with these paths (an incremental update
    resolves just the changed files and those that call into them, against the whole project).
    """
    return _Project(files).resolve(RelationType.CALLS, only)


def resolve_inherits(files: list[FileIndex], only: Collection[str] | None = None) -> list[CodeRelation]:
    """Resolved INHERITS edges for base names that name a class-kind unit of the project."""
    return _Project(files).resolve(RelationType.INHERITS, only)


def resolve_relations(files: list[FileIndex], only: Collection[str] | None = None) -> list[CodeRelation]:
    """CALLS and INHERITS together, indexing the project once (the indexes cost more than a pass)."""
    project = _Project(files)
    return project.resolve(RelationType.CALLS, only) + project.resolve(RelationType.INHERITS, only)


def _suffixes(path: str) -> Iterable[str]:
    parts = path.split("/")
    return ("/".join(parts[i:]) for i in range(len(parts)))


class _Project:
    """Indexes of one project's units by file, by name, and by module path."""

    def __init__(self, files: list[FileIndex]) -> None:
        self.files = {f.path: f for f in files}
        self.units: dict[str, CodeUnit] = {}
        self.by_file: dict[str, dict[str, list[CodeUnit]]] = defaultdict(lambda: defaultdict(list))
        self.by_name: dict[str, list[CodeUnit]] = defaultdict(list)
        self.exact: dict[str, set[str]] = defaultdict(set)  # module path (with/without ext) → files
        self.suffix: dict[str, set[str]] = defaultdict(set)  # any trailing part of those → files
        for f in files:
            for unit in f.units:
                self.units[unit.id] = unit
                self.by_file[f.path][unit.name].append(unit)
                self.by_name[unit.name].append(unit)
            stem, _ = posixpath.splitext(f.path)
            directory = posixpath.dirname(f.path)
            keys = {f.path, stem, directory}
            if posixpath.basename(stem) in _PACKAGE_FILES and directory:
                keys.add(directory)
            for key in keys - {""}:
                self.exact[key].add(f.path)
                for tail in _suffixes(key):
                    self.suffix[tail].add(f.path)

    def imported_files(self, f: FileIndex) -> set[str]:
        """Files that `f` imports, by the module names it wrote."""
        found: set[str] = set()
        directory = posixpath.dirname(f.path)
        for name in f.imports:
            found |= self._module_files(name, directory, f.language)
        if f.language in _PACKAGE_IS_DIRECTORY:  # a Go or Java package sees its directory's files
            found |= {p for p in self.files if posixpath.dirname(p) == directory}
        found.discard(f.path)
        return found

    def _module_files(self, name: str, directory: str, language: str) -> set[str]:
        if language == "python" and name.startswith("."):
            dots = len(name) - len(name.lstrip("."))
            base = directory
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = name[dots:].replace(".", "/")
            return set(self.exact.get(posixpath.join(base, rest) if rest else base, set()))
        if name.startswith(("./", "../")) or (language in ("c", "cpp") and "/" not in name[:1]):
            local = posixpath.normpath(posixpath.join(directory, name))
            for candidate in (local, posixpath.splitext(local)[0]):  # TS writes ./util.js for util.ts
                if candidate in self.exact:
                    return set(self.exact[candidate])
            if name.startswith("."):
                return set()
        # Dotted module names become paths; path-like ones (Go, JS, C includes) stay as written.
        key = name if language in _PATH_IMPORTS else _SEPARATORS.sub("/", name)
        key = key.strip("/")
        for prefix in _RUST_PREFIXES:
            key = key.removeprefix(prefix)
        if not key:
            return set()
        candidates = [key, posixpath.dirname(key)] if "/" in key else [key]
        for candidate in candidates:  # whole path first: `pkg/mod`, then `pkg` (`from pkg import f`)
            if candidate in self.suffix:
                return set(self.suffix[candidate])
        if language != "go":
            return set()
        for candidate in candidates:  # Go paths start with the module: example.com/proj/internal/units
            for tail in list(_suffixes(candidate))[1:]:
                if tail in self.suffix:
                    return set(self.suffix[tail])
        return set()

    def resolve(self, relation_type: RelationType, only: Collection[str] | None = None) -> list[CodeRelation]:
        resolved: dict[tuple[str, str], CodeRelation] = {}
        for f in self.files.values():
            if only is not None and f.path not in only:
                continue
            imported: set[str] | None = None
            for rel in f.relations:
                if rel.type is not relation_type or rel.target_id is not None or not rel.target_name:
                    continue
                if imported is None:
                    imported = self.imported_files(f)
                name = re.split(r"::|\.", rel.target_name)[-1]
                target = self._pick(name, f.path, self.units.get(rel.source_id), imported, relation_type)
                if target is not None and (rel.source_id, target.id) not in resolved:
                    resolved[(rel.source_id, target.id)] = rel.model_copy(update={"target_id": target.id})
        return list(resolved.values())

    def _pick(
        self, name: str, path: str, source: CodeUnit | None, imported: set[str], relation_type: RelationType
    ) -> CodeUnit | None:
        def eligible(units: Iterable[CodeUnit]) -> list[CodeUnit]:
            if relation_type is RelationType.INHERITS:
                return [
                    u for u in units if u.kind is UnitKind.CLASS and u.id != (source.id if source else None)
                ]
            return list(units)

        local = eligible(self.by_file[path].get(name, [])) if path in self.by_file else []
        if local:  # same class first (self.save()), then top-level, then whatever comes first
            parent = source.parent if source else None
            for unit in local:
                if parent is not None and unit.parent == parent:
                    return unit
            return next((u for u in local if u.parent is None), local[0])
        near = eligible(
            u for p in sorted(imported) for u in self.by_file[p].get(name, []) if p in self.by_file
        )
        top = [u for u in near if u.parent is None] or near
        if len(top) == 1:
            return top[0]
        if near:
            return None  # ambiguous among the files it imports: no guess
        anywhere = eligible(self.by_name.get(name, []))
        return anywhere[0] if len(anywhere) == 1 else None
