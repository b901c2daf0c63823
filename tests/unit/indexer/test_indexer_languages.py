"""Per-language expectations on the fixtures in tests/fixtures/languages/.

Each fixture is a small realistic file; these tables pin what the indexer extracts from it, so a
grammar upgrade or a query edit that changes the output shows up here as an exact diff.
"""

from pathlib import Path

import pytest

from indexer import FileIndex, RelationType, parse_file

FIXTURES = Path(__file__).parents[2] / "fixtures" / "languages"

# (qualified_name, kind, subkind, start_line, end_line) for every unit, in source order.
UNITS: dict[str, list[tuple[str, str, str | None, int, int]]] = {
    "sample.py": [
        ("Base", "class", None, 10, 14),
        ("Base.describe", "method", None, 13, 14),
        ("Inventory", "class", None, 17, 37),
        ("Inventory.__init__", "method", None, 20, 22),
        ("Inventory.add", "method", None, 24, 29),
        ("Inventory.size", "method", None, 31, 33),
        ("Inventory.save", "method", None, 35, 37),
        ("sum_positive", "function", None, 40, 46),
        ("add_upbeat", "function", None, 49, 55),
        ("count_negative", "function", None, 58, 63),
        ("build", "function", None, 66, 72),
        ("build.make", "function", None, 67, 68),
    ],
    "sample.js": [
        ("Shape", "class", None, 8, 17),
        ("Shape.constructor", "method", None, 9, 11),
        ("Shape.area", "method", None, 14, 16),
        ("Circle", "class", None, 20, 29),
        ("Circle.constructor", "method", None, 21, 24),
        ("Circle.area", "method", None, 26, 28),
        ("square", "function", None, 32, 34),
        ("loadShapes", "function", None, 37, 41),
        ("total", "function", None, 43, 43),
    ],
    "sample.ts": [
        ("Greeter", "class", "interface", 5, 7),
        ("Greeter.greet", "method", None, 6, 6),
        ("Mood", "class", "enum", 9, 12),
        ("Repository", "class", None, 17, 28),
        ("Repository.validate", "method", None, 20, 20),
        ("Repository.add", "method", None, 22, 27),
        ("UserRepository", "class", None, 31, 39),
        ("UserRepository.validate", "method", None, 32, 34),
        ("UserRepository.greet", "method", None, 36, 38),
        ("formatGreeting", "function", None, 42, 44),
        ("shout", "function", None, 46, 46),
    ],
    "sample.tsx": [
        ("CounterProps", "class", "interface", 4, 6),
        ("Counter", "function", None, 9, 12),
        ("increment", "function", None, 15, 17),
        ("Panel", "class", None, 19, 23),
        ("Panel.render", "method", None, 20, 22),
        ("renderTitle", "function", None, 25, 25),
    ],
    "sample.go": [
        ("Shape", "class", "interface", 12, 15),
        ("Shape.Area", "method", None, 14, 14),
        ("Named", "class", "struct", 18, 20),
        ("Circle", "class", "struct", 23, 26),
        ("Circle.Area", "method", None, 29, 31),
        ("Circle.String", "method", None, 33, 35),
        ("square", "function", None, 38, 40),
        ("Total", "function", None, 43, 49),
    ],
    "sample.rs": [
        ("Shape", "class", "trait", 7, 10),
        ("Shape.area", "method", None, 9, 9),
        ("Circle", "class", "struct", 14, 16),
        ("Kind", "class", "enum", 18, 21),
        ("Circle.new", "method", None, 25, 27),
        ("Circle.area", "method", None, 31, 33),
        ("square", "function", None, 37, 39),
        ("describe", "function", None, 41, 49),
    ],
    "Sample.java": [
        ("Shape", "class", "interface", 10, 12),
        ("Shape.area", "method", None, 11, 11),
        ("NamedShape", "class", None, 15, 21),
        ("NamedShape.NamedShape", "method", None, 18, 20),
        ("Circle", "class", None, 26, 57),
        ("Circle.Circle", "method", None, 29, 32),
        ("Circle.area", "method", None, 35, 38),
        ("Circle.square", "method", None, 41, 43),
        ("Circle.compareTo", "method", None, 45, 48),
        ("Circle.names", "method", None, 50, 56),
        ("Color", "class", "enum", 59, 62),
    ],
    "sample.c": [
        ("point", "class", "struct", 5, 8),
        ("circle_t", "class", "struct", 10, 13),
        ("color", "class", "enum", 15, 15),
        ("square", "function", None, 18, 21),
        ("circle_area", "function", None, 26, 29),
        ("describe", "function", None, 31, 36),
        ("main", "function", None, 38, 43),
    ],
    "sample.cpp": [
        ("geo.Shape", "class", None, 8, 12),
        ("geo.Shape.~Shape", "method", None, 10, 10),
        ("geo.Circle", "class", None, 15, 28),
        ("geo.Circle.Circle", "method", None, 17, 17),
        ("geo.Circle.area", "method", None, 19, 21),
        ("geo.Circle.square", "method", None, 26, 26),
        ("geo.Point", "class", "struct", 30, 32),
        ("geo.Circle.print", "method", None, 35, 37),
        ("largest", "function", None, 41, 48),
        ("main", "function", None, 50, 54),
    ],
}

# (file, qualified_name) → (signature, docstring)
HEADS: dict[tuple[str, str], tuple[str, str | None]] = {
    ("sample.py", "Inventory"): ("class Inventory(Base, metaclass=ABCMeta)", "Keeps items and their counts."),
    ("sample.py", "Inventory.add"): (
        "def add(self, name: str, count: int = 1) -> int",
        "Add ``count`` items called ``name``.",
    ),
    ("sample.py", "Inventory.size"): ("@property def size(self) -> int", None),
    ("sample.py", "add_upbeat"): ("def add_upbeat(numbers)", None),
    ("sample.js", "Shape"): ("class Shape", "A shape with an area."),
    ("sample.js", "Shape.area"): ("area()", "Area of the shape."),
    ("sample.js", "loadShapes"): ("export async function loadShapes(file)", "Load shapes from disk."),
    ("sample.js", "total"): ("const total = (shapes) =>", None),
    ("sample.ts", "Repository"): (
        "export abstract class Repository<T> extends EventEmitter",
        "Base repository.",
    ),
    ("sample.ts", "Greeter.greet"): ("greet(name: string): string", None),
    ("sample.ts", "formatGreeting"): (
        "export function formatGreeting(name: string, mood: Mood): string",
        "Format a greeting for a mood.",
    ),
    ("sample.tsx", "Counter"): ("export function Counter({ start }: CounterProps)", "A counter button."),
    ("sample.go", "Circle"): ("type Circle struct", "Circle is a round shape."),
    ("sample.go", "Shape"): ("type Shape interface", "Shape has an area."),
    ("sample.go", "Circle.Area"): ("func (c *Circle) Area() float64", "Area returns the area of the circle."),
    ("sample.rs", "Circle"): ("pub struct Circle", "A circle."),
    ("sample.rs", "Shape.area"): ("fn area(&self) -> f64", "The area."),
    ("sample.rs", "Circle.new"): ("pub fn new(radius: f64) -> Self", "Make a circle."),
    ("Sample.java", "Shape"): ("interface Shape", "Something with an area."),
    ("Sample.java", "Circle.area"): ("@Override public double area()", "The area of the circle."),
    ("Sample.java", "Circle.square"): ("private static double square(double x)", "Square a number."),
    ("sample.c", "circle_t"): ("typedef struct { ... } circle_t", None),
    ("sample.c", "circle_area"): ("double circle_area(const circle_t *c)", "Area of a circle."),
    ("sample.c", "describe"): ("char *describe(const circle_t *c)", None),
    ("sample.cpp", "geo.Circle"): ("class Circle : public Shape", "A circle."),
    ("sample.cpp", "geo.Circle.print"): ("void Circle::print(std::ostream &out) const", "Print the circle."),
    ("sample.cpp", "largest"): ("template <typename T> T largest(const std::vector<T> &items)", None),
}

# file → (imports, INHERITS as (class, base), calls of one unit)
LINKS: dict[str, tuple[list[str], set[tuple[str, str]], tuple[str, list[str]]]] = {
    "sample.py": (
        ["os.path", "abc", "collections", ".storage"],
        {("Inventory", "Base")},
        ("Inventory.add", ["get", "save"]),
    ),
    "sample.js": (
        ["fs/promises", "./logger.js", "path"],
        {("Circle", "Shape")},
        ("loadShapes", ["readFile", "join", "info", "parse", "map", "Circle"]),
    ),
    "sample.ts": (
        ["events", "./util"],
        {("Repository", "EventEmitter"), ("UserRepository", "Repository"), ("UserRepository", "Greeter")},
        ("Repository.add", ["validate", "push", "emit"]),
    ),
    "sample.tsx": (
        ["react", "./Button"],
        {("Panel", "React.Component")},
        ("Counter", ["useState", "Button", "setCount", "increment"]),
    ),
    "sample.go": (
        ["fmt", "math", "example.com/project/internal/units"],
        {("Shape", "fmt.Stringer"), ("Circle", "Named")},
        ("Circle.String", ["Sprintf", "Format", "Area"]),
    ),
    "sample.rs": (
        ["std::collections::HashMap", "crate::units"],
        {("Circle", "Shape")},
        ("describe", ["new", "insert", "format", "area", "to_string"]),
    ),
    "Sample.java": (
        ["java.util.ArrayList", "java.util.List", "com.example.util.Strings"],
        {("NamedShape", "Shape"), ("Circle", "NamedShape"), ("Circle", "Shape"), ("Circle", "Comparable")},
        ("Circle.names", ["ArrayList", "add", "upper"]),
    ),
    "sample.c": (["stdio.h", "shapes.h"], set(), ("main", ["printf", "circle_area", "describe"])),
    "sample.cpp": (
        ["iostream", "vector", "shape.hpp"],
        {("geo.Circle", "Shape")},
        ("main", ["print", "static_cast", "largest", "area"]),
    ),
}


def _parse(name: str) -> FileIndex:
    return parse_file(FIXTURES / name, FIXTURES)


@pytest.mark.parametrize("name", sorted(UNITS))
def test_units_are_exactly_the_definitions(name: str) -> None:
    index = _parse(name)
    got = [(u.qualified_name, u.kind.value, u.subkind, u.start_line, u.end_line) for u in index.units]
    assert got == UNITS[name]
    assert index.parse_errors == 0
    assert index.path == name


@pytest.mark.parametrize(("name", "qualified_name"), sorted(HEADS))
def test_signature_and_docstring(name: str, qualified_name: str) -> None:
    unit = next(u for u in _parse(name).units if u.qualified_name == qualified_name)
    assert (unit.signature, unit.docstring) == HEADS[(name, qualified_name)]


@pytest.mark.parametrize("name", sorted(LINKS))
def test_imports_inherits_and_calls(name: str) -> None:
    index = _parse(name)
    imports, inherits, (caller, calls) = LINKS[name]
    by_id = {u.id: u for u in index.units}
    assert index.imports == imports
    assert [r.target_name for r in index.relations if r.type is RelationType.IMPORTS] == imports
    got_inherits = {
        (by_id[r.source_id].qualified_name, r.target_name)
        for r in index.relations
        if r.type is RelationType.INHERITS
    }
    assert got_inherits == inherits
    assert next(u for u in index.units if u.qualified_name == caller).calls == calls


@pytest.mark.parametrize("name", sorted(UNITS))
def test_contains_links_each_unit_to_its_holder(name: str) -> None:
    index = _parse(name)
    by_qualified = {u.qualified_name: u for u in index.units}
    contains = {r.target_id: r.source_id for r in index.relations if r.type is RelationType.CONTAINS}
    assert set(contains) == {u.id for u in index.units}
    for unit in index.units:
        holder = by_qualified.get(unit.parent) if unit.parent else None
        assert contains[unit.id] == (holder.id if holder else index.path)
