"""Clone hashes, identifier words and the embedding text."""

from pathlib import Path

from indexer import CodeUnit, embedding_text, parse_file, parse_source, split_identifier

FIXTURES = Path(__file__).parents[2] / "fixtures" / "languages"


def _fixture_units() -> dict[str, CodeUnit]:
    return {u.qualified_name: u for u in parse_file(FIXTURES / "sample.py", FIXTURES).units}


def _one(source: str, language: str = "python") -> CodeUnit:
    return parse_source(source.encode(), language, "x").units[0]


def test_renamed_clone_has_the_same_normalized_hash_but_not_the_same_body_hash() -> None:
    units = _fixture_units()
    original, clone = units["sum_positive"], units["add_upbeat"]
    assert original.normalized_hash == clone.normalized_hash
    assert original.body_hash != clone.body_hash


def test_different_logic_has_a_different_normalized_hash() -> None:
    units = _fixture_units()
    assert units["sum_positive"].normalized_hash != units["count_negative"].normalized_hash


def test_exact_clone_matches_both_hashes() -> None:
    source = "def f(a):\n    return a + 1\n"
    first, second = _one(source), _one(source)
    assert (first.body_hash, first.normalized_hash) == (second.body_hash, second.normalized_hash)


def test_literals_comments_and_whitespace_do_not_change_the_normalized_hash() -> None:
    base = _one("def f(a):\n    return a + 1\n")
    variant = _one("def g(b):   # note\n    # why\n    return (b  +\n            2)\n")
    assert _one("def g(b):\n    return b + 'x'\n").normalized_hash == base.normalized_hash
    assert variant.normalized_hash == base.normalized_hash  # grouping parentheses are layout
    assert _one("def g(b):   # note\n    return b + 2\n").normalized_hash == base.normalized_hash


def test_what_formatters_change_does_not_change_the_normalized_hash() -> None:
    """``ast.unparse`` / black rewrites of the same code: parentheses, trailing commas, tuples."""
    pairs = [
        ("x = (a + 1)\n    return x", "x = a + 1\n    return x"),
        ("return a, 1", "return (a, 1)"),
        ("for (k, v) in a:\n        g(k)", "for k, v in a:\n        g(k)"),
        ("g(x for x in a)", "g((x for x in a))"),
        ("g(\n        a,\n        1,\n    )", "g(a, 1)"),
        ("return [a, 1,]", "return [a, 1]"),
        ("return a.b is None and not a.c", "return (a.b is None) and (not a.c)"),
        ("return (a).b + f(a)[0]", "return a.b + f(a)[0]"),
    ]
    for left, right in pairs:
        assert (
            _one(f"def f(a):\n    {left}\n").normalized_hash
            == _one(f"def f(a):\n    {right}\n").normalized_hash
        ), (left, right)


def test_parentheses_that_group_an_operand_stay_structure() -> None:
    for left, right in [
        ("return (a + 1) * 2", "return a + 1 * 2"),
        ("return not (a or a)", "return not a or a"),
        ("return (a, 1)[0]", "return a, 1[0]"),
    ]:
        assert (
            _one(f"def f(a):\n    {left}\n").normalized_hash
            != _one(f"def f(a):\n    {right}\n").normalized_hash
        )


def test_a_method_that_ends_its_class_hashes_like_the_same_function_elsewhere() -> None:
    """The class's indentation block closes where its last method does: that closer is the class's."""
    method = "    def last(self, a):\n        if a:\n            return a\n"
    in_class = parse_source(
        f"class C:\n    def first(self):\n        pass\n\n{method}".encode(), "python", "x"
    )
    alone = parse_source(f"class D:\n{method}\n    def after(self):\n        pass\n".encode(), "python", "x")
    by_name = {u.qualified_name: u for u in [*in_class.units, *alone.units]}
    assert by_name["C.last"].normalized_hash == by_name["D.last"].normalized_hash
    nested = _one("def outer():\n    def inner(a):\n        return a\n")
    assert nested.normalized_hash != _one("def inner(a):\n    return a\n").normalized_hash  # the outer
    inner = parse_source(b"def outer():\n    def inner(a):\n        return a\n", "python", "x").units[1]
    assert inner.normalized_hash == _one("def inner(a):\n    return a\n").normalized_hash


def test_operators_and_python_block_structure_change_the_normalized_hash() -> None:
    base = _one("def f(a):\n    return a + 1\n")
    assert _one("def f(a):\n    return a - 1\n").normalized_hash != base.normalized_hash
    nested = _one("def f(a):\n    if a:\n        g()\n        h()\n")
    dedented = _one("def f(a):\n    if a:\n        g()\n    h()\n")
    assert nested.normalized_hash != dedented.normalized_hash


def test_clones_are_found_in_brace_languages_too() -> None:
    js_a = _one("function add(a, b) { /* sum */ return a + b * 2; }", "javascript")
    js_b = _one("function plus(x, y) {\n  return x + y * 3;\n}", "javascript")
    assert js_a.normalized_hash == js_b.normalized_hash
    go_a = _one("package p\nfunc f(x int) int { return x * x }\n", "go")
    go_b = _one("package p\nfunc sq(n int) int {\n\treturn n * n\n}\n", "go")
    assert go_a.normalized_hash == go_b.normalized_hash


def test_identifiers_are_split_lowercased_and_distinct() -> None:
    assert split_identifier("getHTTPResponse_code2") == ["get", "http", "response", "code"]
    unit = _fixture_units()["sum_positive"]
    assert unit.identifiers == ["sum", "positive", "values", "total", "value"]
    assert "self" not in _fixture_units()["Inventory.add"].identifiers


def test_embedding_text_is_dense_and_bounded() -> None:
    unit = _fixture_units()["Inventory.add"]
    text = embedding_text(unit)
    assert text.splitlines()[0] == "python method Inventory.add"
    assert "def add(self, name: str, count: int = 1) -> int" in text
    assert "Add ``count`` items called ``name``." in text
    assert text.splitlines()[-1].startswith("add name str count int")
    huge = unit.model_copy(update={"docstring": "word " * 5000, "identifiers": [f"w{i}" for i in range(999)]})
    assert len(embedding_text(huge)) <= 900


def test_keywords_named_like_literal_nodes_stay_keywords() -> None:
    as_string = _one("function f(x: string): string { return x; }", "typescript")
    as_number = _one("function f(x: number): number { return x; }", "typescript")
    assert as_string.normalized_hash != as_number.normalized_hash
