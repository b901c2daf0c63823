"""Registry of the languages the indexer understands.

One small, explicit table (extension → language → grammar wheel → tag query file) instead of a
plugin system: adding a language is one `LanguageSpec` line plus a `queries/<name>.scm` file.
Grammars are imported lazily so that importing the indexer costs nothing until a file of that
language is parsed, and a missing grammar wheel only breaks that one language.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePath

from tree_sitter import Language, Parser, Query


class UnsupportedLanguageError(ValueError):
    """The file's extension (or the named language) has no grammar in the registry."""


@dataclass(frozen=True)
class LanguageSpec:
    """How to parse one language.

    Attributes:
        name: Our language name, stored on every `FileIndex` and `CodeUnit`.
        extensions: Lower-case file suffixes, with the dot.
        module: The grammar wheel's import name (e.g. ``tree_sitter_python``).
        function: The wheel's function returning the language pointer.
        query_files: Tag queries in ``indexer/queries/``, concatenated: TSX is TypeScript's
            query plus the JSX patterns, JavaScript's includes them too.
        comment_docs: Whether leading comments are the docstring (every language but Python).
        indent_block: Node type of blocks delimited by indentation only, for clone hashing.
    """

    name: str
    extensions: tuple[str, ...]
    module: str
    function: str
    query_files: tuple[str, ...]
    comment_docs: bool = True
    indent_block: str | None = None


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python", (".py", ".pyi"), "tree_sitter_python", "language", ("python.scm",), False, "block"
    ),
    LanguageSpec(
        "javascript",
        (".js", ".mjs", ".cjs", ".jsx"),
        "tree_sitter_javascript",
        "language",
        ("javascript.scm", "jsx.scm"),
    ),
    LanguageSpec(
        "typescript",
        (".ts", ".mts", ".cts"),
        "tree_sitter_typescript",
        "language_typescript",
        ("typescript.scm",),
    ),
    LanguageSpec("tsx", (".tsx",), "tree_sitter_typescript", "language_tsx", ("typescript.scm", "jsx.scm")),
    LanguageSpec("go", (".go",), "tree_sitter_go", "language", ("go.scm",)),
    LanguageSpec("rust", (".rs",), "tree_sitter_rust", "language", ("rust.scm",)),
    LanguageSpec("java", (".java",), "tree_sitter_java", "language", ("java.scm",)),
    # `.h` goes to C: the C grammar never misreads C, while C++'s chokes on C code that uses
    # C++ keywords as identifiers. C++ headers in `.h` files still parse, with some errors.
    LanguageSpec("c", (".c", ".h"), "tree_sitter_c", "language", ("c.scm",)),
    LanguageSpec(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"),
        "tree_sitter_cpp",
        "language",
        ("cpp.scm",),
    ),
)

_BY_NAME: dict[str, LanguageSpec] = {spec.name: spec for spec in LANGUAGES}
_BY_EXTENSION: dict[str, LanguageSpec] = {ext: spec for spec in LANGUAGES for ext in spec.extensions}


def supported_languages() -> list[str]:
    """Names of every registered language, in registry order."""
    return [spec.name for spec in LANGUAGES]


def language_for_path(path: str | PurePath) -> str | None:
    """The language of a file from its extension, or None when we have no grammar for it."""
    spec = _BY_EXTENSION.get(PurePath(path).suffix.lower())
    return spec.name if spec else None


def get_spec(language: str) -> LanguageSpec:
    """The registry entry for a language name.

    Raises:
        UnsupportedLanguageError: The name is not registered.
    """
    try:
        return _BY_NAME[language]
    except KeyError:
        known = ", ".join(_BY_NAME)
        raise UnsupportedLanguageError(f"unsupported language {language!r}; known: {known}") from None


@cache
def get_language(language: str) -> Language:
    """The tree-sitter `Language`, imported from its grammar wheel on first use.

    Raises:
        UnsupportedLanguageError: Unknown name, or its grammar wheel is not installed.
    """
    spec = get_spec(language)
    try:
        module = importlib.import_module(spec.module)
    except ImportError as exc:
        package = spec.module.replace("_", "-")
        raise UnsupportedLanguageError(
            f"grammar for {language!r} is not installed (pip install {package})"
        ) from exc
    return Language(getattr(module, spec.function)())


@cache
def get_query(language: str) -> Query:
    """The compiled tag query; `Query` is immutable, so one instance serves every thread."""
    spec = get_spec(language)
    folder = resources.files("indexer").joinpath("queries")
    text = "\n".join(folder.joinpath(name).read_text(encoding="utf-8") for name in spec.query_files)
    return Query(get_language(language), text)


_local = threading.local()


def get_parser(language: str) -> Parser:
    """A `Parser` for this thread: parsers hold mutable state, so threads never share one."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = Parser(get_language(language))
    return parser
