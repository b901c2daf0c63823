"""find_duplicates' pure parts: which snippet units are analysed, folding nested matches, and the
clone shingles stored in a code unit's payload."""

from __future__ import annotations

from indexer import parse_source
from indexer.shingles import Shingles
from memory_service.core.code import records as cr
from memory_service.core.code.clones import _Match, fold_nested, outermost_first

SNIPPET = """\
def helper(a):
    def inner(b):
        return b
    return inner(a)


class Box:
    def put(self, x):
        self.x = x


def last(a):
    return a
"""


def test_outermost_units_are_analysed_first_in_source_order() -> None:
    units = parse_source(SNIPPET.encode(), "python", "q").units
    assert [u.qualified_name for u in units] == ["helper", "helper.inner", "Box", "Box.put", "last"]
    ordered = [u.qualified_name for u in outermost_first(units)]
    assert ordered == ["helper", "Box", "last", "helper.inner", "Box.put"]


def _match(path: str, name: str, match: str = "similar", similarity: float = 0.9) -> _Match:
    return _Match(
        {"file_path": path, "qualified_name": name, "unit_id": f"{path}::{name}"}, similarity, match
    )


def test_matches_inside_a_better_ranked_match_are_folded_into_it() -> None:
    ranked = [
        _match("a.py", "Renderer", "renamed", 1.0),
        _match("a.py", "Renderer.render", "renamed", 1.0),  # inside the class above: folded
        _match("b.py", "Renderer.render", "similar", 0.95),  # same name, other file: kept
        _match("a.py", "Renderer_v2", "similar", 0.9),  # a prefix without the dot is another unit
        _match("c.py", "wrap.inner", "exact", 1.0),
        _match("c.py", "wrap", "similar", 0.88),  # ranked after its member: both kept
    ]
    kept = [(m.data["file_path"], m.data["qualified_name"]) for m in fold_nested(ranked)]
    assert kept == [
        ("a.py", "Renderer"),
        ("b.py", "Renderer.render"),
        ("a.py", "Renderer_v2"),
        ("c.py", "wrap.inner"),
        ("c.py", "wrap"),
    ]


def test_payload_carries_the_shingles_and_old_payloads_have_none() -> None:
    unit = parse_source(SNIPPET.encode(), "python", "q").units[0]
    data = cr.payload(unit, "p")
    assert "shingles" not in data  # the raw bytes are not a payload field...
    assert cr.shingles_of(data) == Shingles.decode(unit.shingles)  # ...their encoding is
    assert cr.unit_from_payload(data).shingles == b""  # read back, a unit does not carry them
    legacy = {k: v for k, v in data.items() if k not in (cr.CLONE_SHINGLES, cr.CLONE_VERSION)}
    assert cr.shingles_of(legacy) is None
    assert cr.shingles_of({**data, cr.CLONE_VERSION: 0}) is None  # an older layout is not compared
    assert cr.shingles_of({**data, cr.CLONE_SHINGLES: "not base64!"}) is None
