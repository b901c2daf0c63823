"""Parser behaviour that is not tied to one fixture: ids, hashes, bad input, scopes, threads."""

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from indexer import (
    FileIndex,
    RelationType,
    UnitKind,
    UnsupportedLanguageError,
    language_for_path,
    parse_file,
    parse_source,
    supported_languages,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "languages"


def _units(index: FileIndex) -> dict[str, str]:
    return {u.qualified_name: u.kind.value for u in index.units}


def test_every_registered_language_has_a_fixture_that_parses() -> None:
    fixtures = {language_for_path(p): p for p in FIXTURES.iterdir()}
    assert set(supported_languages()) <= set(fixtures)
    for language, path in fixtures.items():
        index = parse_file(path, FIXTURES)
        assert index.language == language
        assert index.units, path.name


def test_ids_are_readable_unique_and_stable() -> None:
    first = parse_file(FIXTURES / "sample.py", FIXTURES)
    again = parse_file(FIXTURES / "sample.py", FIXTURES)
    assert [u.id for u in first.units] == [u.id for u in again.units]
    assert len({u.id for u in first.units}) == len(first.units)
    add = next(u for u in first.units if u.qualified_name == "Inventory.add")
    assert add.id == "sample.py::Inventory.add#method"
    assert add.file_path == "sample.py"
    assert add.parent == "Inventory"


def test_overloads_get_the_start_line_in_their_id() -> None:
    source = b"class A {\n  void f(int x) {}\n  void f(String s) {}\n}\n"
    ids = [u.id for u in parse_source(source, "java", "A.java").units]
    assert ids == ["A.java::A#class", "A.java::A.f#method", "A.java::A.f#method@L3"]


def test_file_level_fields() -> None:
    source = (FIXTURES / "sample.go").read_bytes()
    index = parse_file(FIXTURES / "sample.go", FIXTURES, source=source)
    assert index.content_hash == hashlib.sha256(source).hexdigest()
    assert index.line_count == 49
    assert index.id == "sample.go"
    square = next(u for u in index.units if u.name == "square")
    text = b"\n".join(source.splitlines()[square.start_line - 1 : square.end_line])
    assert square.body_hash == hashlib.sha256(text).hexdigest()


def test_path_is_relative_to_root_with_forward_slashes(tmp_path: Path) -> None:
    path = tmp_path / "src" / "pkg" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text("def f():\n    return 1\n")
    index = parse_file(path, tmp_path)
    assert index.path == "src/pkg/mod.py"
    assert index.units[0].id == "src/pkg/mod.py::f#function"


def test_unknown_extension_or_language_raises_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedLanguageError, match=r"\.txt"):
        parse_file(tmp_path / "notes.txt", tmp_path, source=b"hello")
    with pytest.raises(UnsupportedLanguageError, match="cobol"):
        parse_source(b"", "cobol", "x.cob")


def test_broken_source_returns_partial_units_and_counts_errors() -> None:
    source = (
        b"def ok(a):\n    return a\n\n"
        b"def broken(:\n    pass\n\n"
        b"class Later:\n    def m(self):\n        ok(1)\n"
    )
    index = parse_source(source, "python", "broken.py")
    assert index.parse_errors > 0
    assert index.has_parse_errors
    assert {"ok", "Later", "Later.m"} <= set(_units(index))


@pytest.mark.parametrize(
    ("language", "source"),
    [
        ("c", b"int main( { return 0; }\nint other(void) { return 1; }\n"),
        ("typescript", b"class A {\n  m( {\n}\nfunction f() {}\n"),
        ("rust", b"fn f( {}\nfn g() {}\n"),
        ("python", b"\xff\xfe\x00garbage \x80\x81 def"),
        ("go", b""),
    ],
)
def test_bad_input_never_raises(language: str, source: bytes) -> None:
    index = parse_source(source, language, "bad")
    assert index.parse_errors > 0 or source == b""


def test_module_level_calls_belong_to_the_file() -> None:
    index = parse_source(b"import app\n\napp.main()\n", "python", "run.py")
    calls = [r for r in index.relations if r.type is RelationType.CALLS]
    assert [(r.source_id, r.target_name, r.properties) for r in calls] == [("run.py", "main", {"line": 3})]


def test_nested_functions_and_classes_inside_functions() -> None:
    source = b"def outer():\n  class Local:\n    def m(self):\n      def inner():\n        pass\n"
    index = parse_source(source, "python", "n.py")
    assert _units(index) == {
        "outer": "function",
        "outer.Local": "class",
        "outer.Local.m": "method",
        "outer.Local.m.inner": "function",
    }
    inner = next(u for u in index.units if u.name == "inner")
    assert inner.parent == "outer.Local.m"


def test_namespaces_qualify_names_without_being_units() -> None:
    rust = b"mod geo {\n    pub struct P;\n    impl P { fn new() -> P { P } }\n}\n"
    assert _units(parse_source(rust, "rust", "g.rs")) == {"geo.P": "class", "geo.P.new": "method"}
    ts = b"namespace Geo {\n  export function area(): number { return 1; }\n}\n"
    assert _units(parse_source(ts, "typescript", "g.ts")) == {"Geo.area": "function"}


def test_methods_of_types_defined_elsewhere_hang_off_the_file() -> None:
    index = parse_source(b"package x\n\nfunc (s *Server[T]) Start() error { return nil }\n", "go", "s.go")
    (unit,) = index.units
    assert (unit.qualified_name, unit.kind, unit.parent) == ("Server.Start", UnitKind.METHOD, "Server")
    contains = [r for r in index.relations if r.type is RelationType.CONTAINS]
    assert [(r.source_id, r.target_id) for r in contains] == [("s.go", unit.id)]


def test_object_literal_methods_are_functions() -> None:
    index = parse_source(b"export default {\n  data() { return {}; },\n};\n", "javascript", "c.js")
    assert _units(index) == {"data": "function"}


def test_rust_trait_impl_makes_an_inherits_edge() -> None:
    index = parse_source(b"struct A;\nimpl Clone for A { fn clone(&self) -> A { A } }\n", "rust", "a.rs")
    inherits = [r for r in index.relations if r.type is RelationType.INHERITS]
    assert [(r.source_id, r.target_name) for r in inherits] == [("a.rs::A#class", "Clone")]


def test_parsing_from_many_threads_gives_the_same_result() -> None:
    paths = sorted(FIXTURES.iterdir()) * 8
    serial = [parse_file(p, FIXTURES).model_dump() for p in paths]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda p: parse_file(p, FIXTURES).model_dump(), paths))
    assert threaded == serial
