"""What code units embed (dense summary) and how code_search folds overloads: pure logic."""

from __future__ import annotations

from typing import Any

import pytest

from indexer import CodeUnit, UnitKind, parse_source
from memory_service.core.code import records as cr
from memory_service.core.code.search import _distinct, _rrf
from memory_service.core.ports import ScoredPoint


def _unit(name: str, signature: str, docstring: str | None = None, **extra: Any) -> CodeUnit:
    return CodeUnit(
        id=f"m.py::{name}#function",
        name=name.rsplit(".", 1)[-1],
        qualified_name=name,
        kind=UnitKind.FUNCTION,
        signature=signature,
        docstring=docstring,
        file_path="m.py",
        start_line=1,
        end_line=2,
        language="python",
        body_hash="b",
        normalized_hash="n",
        **extra,
    )


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Help.boxWrap", "help box wrap"),
        ("Command._parseOptionsEnv", "command parse options env"),
        ("get_app_dir", "get app dir"),
        ("HTTPServer.readHTML_toJSON", "http server read html to json"),
        ("sha256sum", "sha256 sum"),  # digits stay with the letters before them
        ("__init__", "init"),
        ("ns::Vec3::len", "ns vec3 len"),
        ("größe_berechnen", "größe berechnen"),  # non-ASCII: split at _ only, letters kept
        ("$emit", "emit"),
        ("_", ""),
    ],
)
def test_name_words_split_camel_snake_and_dots(name: str, words: str) -> None:
    assert cr.name_words(name) == words


def test_dense_text_reads_name_words_signature_then_first_sentence() -> None:
    unit = _unit(
        "Help.boxWrap",
        "boxWrap(str,   width)",
        "Wrap a string at whitespace. Existing line breaks are kept.\n\nMore detail.",
    )
    assert cr.dense_text(unit) == "help box wrap: boxWrap(str, width) — Wrap a string at whitespace"


def test_dense_text_of_a_name_without_words_keeps_the_name() -> None:
    assert cr.dense_text(_unit("_", "def _(x)")) == "_: def _(x)"


def test_dense_text_cuts_a_long_signature_so_the_docstring_fits() -> None:
    signature = (
        "def style(" + ", ".join(f"arg{i}: int | tuple[int, int, int] | None = None" for i in range(9)) + ")"
    )
    unit = _unit("style", signature, "Styles a text with ANSI styles and returns the new string.")
    text = cr.dense_text(unit)
    assert len(text) <= cr.DENSE_MAX_CHARS
    assert text.endswith("— Styles a text with ANSI styles and returns the new string.")
    assert signature[: cr.DENSE_SIGNATURE_CHARS] in text and signature not in text


def test_dense_text_never_exceeds_its_budget_and_leaves_identifiers_to_bm25() -> None:
    unit = _unit("f", "def f()", "x" * 1000, identifiers=["alpha", "beta"])
    assert len(cr.dense_text(unit)) == cr.DENSE_MAX_CHARS
    assert "alpha" not in cr.dense_text(_unit("f", "def f()", identifiers=["alpha"]))
    assert "alpha" in cr.sparse_text(_unit("f", "def f()", identifiers=["alpha"]))


def test_dense_text_of_a_parsed_javascript_method() -> None:
    source = (
        b"class Help {\n  /** Strip ANSI codes. */\n  displayWidth(str) {\n    return str.length;\n  }\n}\n"
    )
    unit = next(u for u in parse_source(source, "javascript", "help.js").units if u.name == "displayWidth")
    assert cr.dense_text(unit) == "help display width: displayWidth(str) — Strip ANSI codes."


def _point(pid: str, file_path: str, qualified_name: str) -> ScoredPoint:
    return ScoredPoint(pid, 0.0, {"file_path": file_path, "qualified_name": qualified_name})


def test_weighted_fusion_lets_a_weighted_ranking_break_ties() -> None:
    a, b = _point("a", "m.py", "a"), _point("b", "m.py", "b")
    assert [p.id for p, _ in _rrf([[a, b], [b, a]], [1.5, 1.0])] == ["a", "b"]
    assert [p.id for p, _ in _rrf([[a, b], [b, a]], [1.0, 1.5])] == ["b", "a"]
    fused = dict((p.id, s) for p, s in _rrf([[a], [a, b]]))  # no weights: each ranking counts 1
    assert fused == pytest.approx({"a": 2 / 61, "b": 1 / 62})


def test_overloads_take_one_place_the_best_ranked() -> None:
    a1, a2 = _point("a1", "m.py", "Editor.edit"), _point("a2", "m.py", "Editor.edit")
    b = _point("b", "m.py", "Editor.edit_files")
    elsewhere = _point("c", "n.py", "Editor.edit")  # the same name in another file: another unit
    fused = _rrf([[a2, b, a1, elsewhere], [a1, a2]])
    assert [p.id for p, _ in fused] == ["a2", "a1", "b", "c"]
    kept = _distinct(fused)
    assert [p.id for p, _ in kept] == ["a2", "b", "c"]
    assert [s for _, s in kept] == [s for p, s in fused if p.id != "a1"]
