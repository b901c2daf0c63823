"""Cross-file resolution of call and base-class names to unit ids."""

from pathlib import Path

from indexer import FileIndex, parse_file, parse_source, resolve_calls, resolve_inherits
from indexer.languages import language_for_path

FIXTURES = Path(__file__).parents[2] / "fixtures" / "languages"


def _project(files: dict[str, str]) -> list[FileIndex]:
    out = []
    for path, text in files.items():
        language = language_for_path(path)
        assert language is not None
        out.append(parse_source(text.encode(), language, path))
    return out


def _edges(files: list[FileIndex]) -> set[tuple[str, str]]:
    return {(r.source_id, r.target_id or "") for r in resolve_calls(files)}


def test_same_file_calls_resolve_and_unknown_names_are_dropped() -> None:
    index = parse_file(FIXTURES / "sample.py", FIXTURES)
    edges = _edges([index])
    assert edges == {
        ("sample.py::Inventory.add#method", "sample.py::Inventory.save#method"),
        ("sample.py::build#function", "sample.py::build.make#function"),
        ("sample.py::build#function", "sample.py::Inventory.add#method"),
        ("sample.py::build#function", "sample.py::sum_positive#function"),
        ("sample.py::build.make#function", "sample.py::Inventory#class"),
    }
    resolved = resolve_calls([index])
    assert all(r.target_name and r.properties.get("line") for r in resolved)


def test_same_class_wins_inside_a_file() -> None:
    files = _project(
        {
            "m.py": "class A:\n    def run(self):\n        self.save()\n    def save(self):\n        pass\n"
            "class B:\n    def save(self):\n        pass\n"
        }
    )
    assert _edges(files) == {("m.py::A.run#method", "m.py::A.save#method")}


def test_imported_module_wins_over_other_definitions() -> None:
    files = _project(
        {
            "pkg/util.py": "def helper():\n    pass\n",
            "other/util.py": "def helper():\n    pass\n",
            "pkg/app.py": "from .util import helper\n\ndef main():\n    helper()\n",
            "pkg/cli.py": "import other.util\n\ndef run():\n    other.util.helper()\n",
            "loose.py": "def go():\n    helper()\n",
        }
    )
    assert _edges(files) == {
        ("pkg/app.py::main#function", "pkg/util.py::helper#function"),
        ("pkg/cli.py::run#function", "other/util.py::helper#function"),
        # loose.py imports nothing and `helper` is defined twice: no guess
    }


def test_a_unique_definition_anywhere_resolves() -> None:
    files = _project(
        {
            "a/deep/tools.py": "def only_here():\n    pass\n",
            "b/main.py": "def main():\n    only_here()\n    len([])\n",
        }
    )
    assert _edges(files) == {("b/main.py::main#function", "a/deep/tools.py::only_here#function")}


def test_relative_javascript_imports() -> None:
    files = _project(
        {
            "src/logger.js": "export function info(msg) { console.log(msg); }\n",
            "src/audit.js": "export function info(msg) {}\n",
            "src/app.js": "import Logger from './logger.js';\nfunction start() { Logger.info('x'); }\n",
        }
    )
    assert _edges(files) == {("src/app.js::start#function", "src/logger.js::info#function")}


def test_go_package_sees_its_directory_and_module_imports() -> None:
    files = _project(
        {
            "shapes/a.go": "package shapes\nfunc Area() float64 { return square(2) }\n",
            "shapes/b.go": "package shapes\nfunc square(x float64) float64 { return x * x }\n",
            "other/b.go": "package other\nfunc square(x float64) float64 { return x }\n",
            "internal/units/f.go": 'package units\nfunc Format(x float64) string { return "" }\n',
            "cmd/main.go": 'package main\nimport "example.com/proj/internal/units"\n'
            "func main() { units.Format(1) }\n",
        }
    )
    assert _edges(files) == {
        ("shapes/a.go::Area#function", "shapes/b.go::square#function"),
        ("cmd/main.go::main#function", "internal/units/f.go::Format#function"),
    }


def test_java_imports_map_to_source_roots() -> None:
    files = _project(
        {
            "src/main/java/com/example/util/Strings.java": "class Strings { static String upper() {} }",
            "src/main/java/com/example/other/Text.java": "class Text { static String upper() {} }",
            "src/main/java/com/example/App.java": "import com.example.util.Strings;\n"
            'class App { void run() { Strings.upper("x"); } }',
        }
    )
    assert _edges(files) == {
        (
            "src/main/java/com/example/App.java::App.run#method",
            "src/main/java/com/example/util/Strings.java::Strings.upper#method",
        )
    }


def test_c_includes_resolve_relative_to_the_including_file() -> None:
    files = _project(
        {
            "lib/shapes.h": "double area(double r);\n",
            "lib/shapes.c": "double area(double r) { return r * r; }\n",
            "lib/main.c": '#include "shapes.h"\nint main(void) { return (int) area(2.0); }\n',
        }
    )
    assert _edges(files) == {("lib/main.c::main#function", "lib/shapes.c::area#function")}


def test_inherits_resolve_to_class_units_across_files() -> None:
    files = _project(
        {
            "base.py": "class Base:\n    pass\n\ndef Mixin():\n    pass\n",
            "child.py": "from base import Base\n\nclass Child(Base, Mixin):\n    pass\n",
        }
    )
    resolved = resolve_inherits(files)
    assert [(r.source_id, r.target_id, r.target_name) for r in resolved] == [
        ("child.py::Child#class", "base.py::Base#class", "Base"),  # Mixin is a function: no edge
    ]
    js = parse_file(FIXTURES / "sample.js", FIXTURES)
    assert [(r.source_id, r.target_id) for r in resolve_inherits([js])] == [
        ("sample.js::Circle#class", "sample.js::Shape#class")
    ]


def test_resolve_relations_is_calls_plus_inherits() -> None:
    from pathlib import Path

    from indexer import parse_file, resolve_calls, resolve_inherits, resolve_relations

    root = Path(__file__).resolve().parents[2] / "fixtures" / "languages"
    files = [parse_file(root / name, root) for name in ("sample.py", "sample.ts", "Sample.java")]
    expected = resolve_calls(files) + resolve_inherits(files)
    assert resolve_relations(files) == expected and expected
    only = {"sample.py"}
    assert resolve_relations(files, only) == resolve_calls(files, only) + resolve_inherits(files, only)
    assert {r.source_id.split("::")[0] for r in resolve_relations(files, only)} == only
