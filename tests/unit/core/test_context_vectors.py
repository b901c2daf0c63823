"""core/context_vectors.py over a recording fake: which plain port calls it makes (the contract
suite proves the behaviour on every real backend, tests/contract/test_vector_store.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_service.core.context_vectors import (
    ContextPoint,
    ContextVectors,
    context_collection,
    context_vectors,
)
from memory_service.core.ports import CollectionSpec, Maintainable, SparseVector, VectorPoint

SPEC = CollectionSpec("memories", 2)


class Recording:
    """The calls a wrapper makes; ``retrieve`` finds the ids in ``kept``."""

    def __init__(self, kept: Sequence[str] = ()) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.kept = set(kept)

    def ensure_collection(self, spec: CollectionSpec) -> None:
        self.calls.append(("ensure", spec.name))

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        self.calls.append(("upsert", collection, [(p.id, p.dense, p.sparse) for p in points]))

    def retrieve(self, collection: str, ids: Sequence[str], **kw: Any) -> list[VectorPoint]:
        self.calls.append(("retrieve", collection, list(ids), kw))
        return [VectorPoint(i, {}) for i in ids if i in self.kept]

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        self.calls.append(("delete", collection, list(ids)))

    def close(self) -> None:
        self.calls.append(("close",))


class Engine(Recording):
    def optimize(self, collection: str) -> bool:
        self.calls.append(("optimize", collection))
        return collection == "memories"

    def upkeep(self) -> bool:
        return True


def test_the_sibling_is_named_as_stores_made_before_hold_it() -> None:
    assert context_collection("memories") == "memories__context"


def test_pairs_go_to_the_sibling_and_a_point_without_one_drops_its_pair() -> None:
    store = Recording(kept=["b"])
    vectors = context_vectors(store, ["memories"])  # type: ignore[arg-type]
    vectors.ensure_collection(SPEC)
    assert store.calls == [("ensure", "memories"), ("ensure", "memories__context")]
    store.calls.clear()
    pair = ContextPoint(
        "a", {}, dense=[1.0, 0.0], context_dense=[0.0, 1.0], context_sparse=SparseVector([1], [1.0])
    )
    vectors.upsert("memories", [pair, VectorPoint("b", {}, dense=[1.0, 0.0])])
    assert store.calls == [
        ("upsert", "memories", [("a", [1.0, 0.0], None), ("b", [1.0, 0.0], None)]),
        ("retrieve", "memories__context", ["b"], {"payload": False}),  # ids only: no payload read
        ("upsert", "memories__context", [("a", [0.0, 1.0], SparseVector([1], [1.0]))]),
        ("delete", "memories__context", ["b"]),
    ]
    assert vectors.context_ids("memories", ["a", "b"]) == {"b"}


def test_only_an_embedded_engine_makes_it_maintainable() -> None:
    plain = context_vectors(Recording(), ["memories"])  # type: ignore[arg-type]
    assert type(plain) is ContextVectors and not isinstance(plain, Maintainable)
    engine = Engine()
    vectors = context_vectors(engine, ["memories"])  # type: ignore[arg-type]
    assert isinstance(vectors, Maintainable) and vectors.upkeep() is True
    vectors.ensure_collection(SPEC)
    engine.calls.clear()
    assert vectors.optimize("memories") is True
    assert engine.calls == [("optimize", "memories"), ("optimize", "memories__context")]


def test_a_close_during_the_build_leaves_the_sibling_alone() -> None:
    engine = Engine()
    vectors = context_vectors(engine, ["memories"])  # type: ignore[arg-type]
    vectors.ensure_collection(SPEC)
    assert isinstance(vectors, Maintainable)
    real = engine.optimize

    def closing(collection: str) -> bool:
        vectors.close()  # what shutdown does while housekeeping builds
        return real(collection)

    engine.optimize = closing  # type: ignore[method-assign]
    engine.calls.clear()
    vectors.optimize("memories")
    assert engine.calls == [("close",), ("optimize", "memories")]
