"""Contract tests for the VectorStore port, run against every available backend.

Backends: ``edge`` (qdrant-edge, embedded), ``qdrant-local`` (the qdrant-client adapter on
qdrant-client's local mode in the test's directory: same client calls, no server) and
``qdrant-server`` (the same adapter on a real server, listed only when MEMORY_TEST_QDRANT_URL is set;
MEMORY_TEST_QDRANT_API_KEY if it needs a key; each test uses its own collection prefix and drops
its collections afterwards). Local mode ignores payload indexes and HNSW (exact search in Python),
so what a server does with them (index-backed ``order_by``, HNSW search) is exercised on
``qdrant-server`` alone.

Vectors are deterministic numpy draws: points cluster around a few topic centroids, so "nearest"
has a known answer without an embedding model. The last sections hold qdrant-client adapter
specifics and qdrant-edge specifics (out-of-process optimize, swap recovery, durability after
SIGKILL).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_service.core.context_vectors import ContextPoint, context_collection, context_vectors
from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import (
    CollectionSpec,
    Maintainable,
    PayloadFilter,
    SparseVector,
    VectorPoint,
    VectorStore,
)
from memory_service.stores.qdrant.edge import EdgeVectorStore
from tests.conftest import missing, resident_kb

pytestmark = pytest.mark.contract

SERVER_URL = os.environ.get("MEMORY_TEST_QDRANT_URL")
# qdrant-server is listed only when a server is configured: the one backend allowed to be absent.
BACKENDS = ["edge", "qdrant-local", *(["qdrant-server"] if SERVER_URL else [])]
QDRANT_BACKENDS = [b for b in BACKENDS if b.startswith("qdrant")]
DIM = 32
TOPICS = np.random.default_rng(7).standard_normal((4, DIM))
SPEC = CollectionSpec(
    "memories", DIM, sparse=True, keyword_indexes=("project", "kind"), float_indexes=("importance",)
)
MakeStore = Callable[[], VectorStore]
_RUN = uuid.uuid4().hex[:8]  # server collection prefixes differ between runs too


def server_prefix(root: Path) -> str:
    """A collection prefix of its own for each test directory (stable across reopen)."""
    return f"t{_RUN}_{uuid.uuid5(uuid.NAMESPACE_URL, str(root)).hex[:8]}_"


def qdrant_adapter() -> Any:
    """The qdrant-client adapter class (qdrant-client comes with the server extra)."""
    try:
        from memory_service.stores.qdrant.server import QdrantServerVectorStore
    except ImportError as exc:
        missing(f"qdrant-client is not installed ({exc}): install the server extra")
    return QdrantServerVectorStore


def qdrant_store(backend: str, root: Path, **kwargs: Any) -> Any:
    """The qdrant-client adapter: local mode on ``root``, or the test server with a prefix."""
    adapter = qdrant_adapter()
    if backend == "qdrant-local":
        return adapter(path=str(root), **kwargs)
    kwargs.setdefault("prefix", server_prefix(root))
    with warnings.catch_warnings():  # a key over plain http (a test server) is warned about
        warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
        return adapter(SERVER_URL, api_key=os.environ.get("MEMORY_TEST_QDRANT_API_KEY"), **kwargs)


def drop_server_collections(root: Path) -> None:
    """Remove what a test made on the shared server (local mode lives in the test's directory)."""
    from qdrant_client import QdrantClient

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Api key is used with an insecure connection")
        client = QdrantClient(
            url=SERVER_URL, api_key=os.environ.get("MEMORY_TEST_QDRANT_API_KEY"), check_compatibility=False
        )
    try:
        for coll in client.get_collections().collections:
            if coll.name.startswith(server_prefix(root)):
                client.delete_collection(coll.name)
    finally:
        client.close()


def open_store(backend: str, root: Path) -> VectorStore:
    """The backend on ``root`` with SPEC ensured."""
    if backend == "edge":
        # A tiny HNSW threshold so optimize() really builds HNSW on test-sized collections.
        store: VectorStore = EdgeVectorStore(root, indexing_threshold_kb=64)
    else:
        store = qdrant_store(backend, root, indexing_threshold_kb=64)
    store.ensure_collection(SPEC)
    return store


def _cleanup(backend: str, root: Path, opened: list[VectorStore]) -> None:
    for store in opened:
        store.close()
    if backend == "qdrant-server" and opened:  # none opened: the server was not reached
        drop_server_collections(root)


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """Opens the backend on the test's directory; call again to reopen after close()."""
    opened: list[VectorStore] = []

    def make() -> VectorStore:
        opened.append(open_store(request.param, tmp_path / "vectors"))
        return opened[-1]

    yield make
    _cleanup(request.param, tmp_path / "vectors", opened)


@pytest.fixture
def store(make_store: MakeStore) -> VectorStore:
    return make_store()


@pytest.fixture(scope="module", params=BACKENDS)
def filtered(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[VectorStore, list[VectorPoint]]]:
    """One read-only store shared by the filter cases (creating a shard costs ~0.3 s)."""
    root = tmp_path_factory.mktemp("filters")
    store = open_store(request.param, root)
    points = make_points(80)
    store.upsert(SPEC.name, points)
    yield store, points
    _cleanup(request.param, root, [store])


def dense(topic: int, seed: int, noise: float = 0.35) -> list[float]:
    v = TOPICS[topic] + noise * np.random.default_rng(seed).standard_normal(DIM)
    return [float(x) for x in v / np.linalg.norm(v)]


def make_points(n: int, *, start: int = 0) -> list[VectorPoint]:
    """Points with both vectors and a payload that every filter case can slice."""
    return [
        VectorPoint(
            id=str(uuid.UUID(int=i + 1)),
            payload={
                "i": i,
                "topic": i % 4,
                "project": f"p{i % 3}",
                "kind": ("note", "decision")[i % 2],
                "importance": round((i % 10) / 10, 1),
                "pinned": i % 5 == 0,
            },
            dense=dense(i % 4, i),
            sparse=SparseVector([0, 10 + i % 7], [1.0, float(1 + i % 3)]),
        )
        for i in range(start, start + n)
    ]


def paired(point: VectorPoint, dense: list[float] | None, sparse: SparseVector | None) -> ContextPoint:
    """``point`` with a context pair (as the writer makes a memory of a thread)."""
    return ContextPoint(point.id, point.payload, point.dense, point.sparse, dense, sparse)


def optimize(store: Any, name: str) -> bool:
    """Build the indexes where the engine does it in this process (a server builds its own)."""
    return bool(store.optimize(name)) if isinstance(store, Maintainable) else False


def ids_of(points: list[Any]) -> set[str]:
    return {p.id for p in points}


def scroll_all(store: VectorStore, flt: PayloadFilter | None = None, limit: int = 64) -> list[VectorPoint]:
    out: list[VectorPoint] = []
    offset: str | None = None
    while True:
        page, offset = store.scroll(SPEC.name, flt, limit=limit, offset=offset)
        out += page
        if offset is None:
            return out


# --------------------------------------------------------------------------- collections


def test_adapter_satisfies_the_port(store: VectorStore) -> None:
    assert isinstance(store, VectorStore)
    # Only an embedded engine builds its indexes and keeps itself in shape from this process.
    assert isinstance(store, Maintainable) == isinstance(store, EdgeVectorStore)


def test_ensure_collection_is_idempotent(make_store: MakeStore) -> None:
    store = make_store()
    store.upsert(SPEC.name, make_points(5))
    store.ensure_collection(SPEC)
    store.ensure_collection(CollectionSpec(SPEC.name, DIM, keyword_indexes=("project", "extra")))
    assert store.count(SPEC.name) == 5
    store.close()
    again = make_store()
    again.ensure_collection(SPEC)
    assert again.count(SPEC.name) == 5


def test_bad_collection_name_is_a_clear_error(store: VectorStore) -> None:
    for name in ("", "../escape", "a/b", ".hidden", "x" * 65):
        with pytest.raises(MemoryServiceError) as err:
            store.ensure_collection(CollectionSpec(name, DIM))
        assert err.value.code and err.value.suggestion, name


def test_unknown_collection_and_closed_store_are_service_errors(store: VectorStore) -> None:
    with pytest.raises(ServiceUnavailableError):
        store.count("never_created")
    store.close()
    with pytest.raises(ServiceUnavailableError):
        store.count(SPEC.name)
    assert store.health().state == "unavailable"


def test_wrong_dimension_is_refused(store: VectorStore) -> None:
    with pytest.raises(MemoryServiceError):
        store.upsert(SPEC.name, [VectorPoint(str(uuid.uuid4()), {}, dense=[1.0, 0.0])])
    with pytest.raises(MemoryServiceError):
        store.search_dense(SPEC.name, [1.0, 0.0], 5)
    assert store.count(SPEC.name) == 0


# --------------------------------------------------------------------------- records


def test_upsert_retrieve_round_trip(store: VectorStore) -> None:
    payload = {
        "content": 'Décision: use 日本語 & emoji 🎉 \u2028 "quotes"',
        "tags": ["a", "b"],
        "nested": {"x": [1, 2.5, None, True]},
        "n": 2**53,
        "flag": False,
        "none": None,
    }
    pid, other, missing = (str(uuid.uuid4()) for _ in range(3))
    store.upsert(
        SPEC.name,
        [
            VectorPoint(pid, payload, dense=dense(0, 1)),
            VectorPoint(other.upper(), {"k": 1}, sparse=SparseVector([3], [1.0])),
        ],
    )
    got = store.retrieve(SPEC.name, [other, missing, pid])
    assert [p.id for p in got] == [other, pid]  # order asked, unknown ids left out, lowercase ids
    assert got[1].payload == payload
    store.upsert(SPEC.name, [VectorPoint(pid, {"content": "v2"}, dense=dense(0, 1))])
    assert store.retrieve(SPEC.name, [pid])[0].payload == {"content": "v2"}
    assert store.retrieve(SPEC.name, []) == []


def test_retrieve_with_dense_returns_the_stored_vector(store: VectorStore) -> None:
    pid, bare = str(uuid.uuid4()), str(uuid.uuid4())
    vector = dense(1, 7)
    store.upsert(SPEC.name, [VectorPoint(pid, {"k": 1}, dense=vector), VectorPoint(bare, {"k": 2})])
    plain, without = store.retrieve(SPEC.name, [pid, bare])
    assert plain.dense is None and without.dense is None  # not asked: no vectors read
    got, none = store.retrieve(SPEC.name, [pid, bare], with_dense=True)
    assert none.dense is None and got.payload == {"k": 1}
    assert got.dense is not None and len(got.dense) == SPEC.dense_dim
    unit = np.asarray(vector) / np.linalg.norm(vector)  # cosine collections keep it normalised
    # qdrant-edge keeps new collections' vectors as float16 (error under 2**-11 on unit vectors)
    assert np.allclose(got.dense, unit, atol=1e-3)


def test_overwrite_payload_keeps_vectors(store: VectorStore) -> None:
    points = make_points(6)
    store.upsert(SPEC.name, points)
    target, unknown = points[2], str(uuid.uuid4())
    store.overwrite_payload(
        SPEC.name, [VectorPoint(target.id, {"project": "moved", "é": "ü"}), VectorPoint(unknown, {"x": 1})]
    )  # unknown ids are skipped
    assert store.retrieve(SPEC.name, [target.id])[0].payload == {"project": "moved", "é": "ü"}
    assert store.retrieve(SPEC.name, [unknown]) == []
    hit = store.search_dense(SPEC.name, target.dense or [], 1, PayloadFilter(equals={"project": "moved"}))
    assert [h.id for h in hit] == [target.id]
    assert target.id in ids_of(store.search_sparse(SPEC.name, target.sparse or SparseVector([], []), 6))
    assert store.count(SPEC.name) == 6


def test_delete(store: VectorStore) -> None:
    points = make_points(20)
    store.upsert(SPEC.name, points)
    gone = [p.id for p in points[:5]]
    store.delete(SPEC.name, [*gone, str(uuid.uuid4())])  # unknown ids are ignored
    assert store.retrieve(SPEC.name, gone) == []
    assert store.count(SPEC.name) == 15
    hits = store.search_dense(SPEC.name, points[0].dense or [], 20)
    assert not ids_of(hits) & set(gone)
    assert not ids_of(store.search_sparse(SPEC.name, SparseVector([0], [1.0]), 50)) & set(gone)


# --------------------------------------------------------------------------- search


def test_dense_search_ranks_nearest_first(store: VectorStore) -> None:
    points = make_points(100)
    store.upsert(SPEC.name, points)
    hits = store.search_dense(SPEC.name, [float(x) for x in TOPICS[2]], 10)
    assert len(hits) == 10
    assert all(h.payload["topic"] == 2 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    own = store.search_dense(SPEC.name, points[37].dense or [], 1)[0]
    assert own.id == points[37].id and own.score == pytest.approx(1.0, abs=1e-4)
    assert own.payload == points[37].payload
    assert store.search_dense(SPEC.name, points[0].dense or [], 0) == []


def test_sparse_search_scores_rare_terms_higher(store: VectorStore) -> None:
    ids = [str(uuid.uuid4()) for _ in range(6)]
    common, rare = 1, 2
    store.upsert(
        SPEC.name,
        [
            VectorPoint(ids[0], {"n": 0}, sparse=SparseVector([common], [1.0])),
            VectorPoint(ids[1], {"n": 1}, sparse=SparseVector([common], [1.0])),
            VectorPoint(ids[2], {"n": 2}, sparse=SparseVector([common], [1.0])),
            VectorPoint(ids[3], {"n": 3}, sparse=SparseVector([rare], [1.0])),
            VectorPoint(ids[4], {"n": 4}, sparse=SparseVector([common], [3.0])),  # higher term frequency
            VectorPoint(ids[5], {"n": 5}, sparse=SparseVector([99], [1.0])),
        ],
    )
    hits = store.search_sparse(SPEC.name, SparseVector([common, rare], [1.0, 1.0]), 10)
    assert hits[0].id == ids[3]  # IDF: the rare term outweighs the common one
    assert hits[1].id == ids[4]  # then term frequency
    assert ids[5] not in ids_of(hits)  # no shared term, no hit
    assert hits[0].payload == {"n": 3}
    assert store.search_sparse(SPEC.name, SparseVector([], []), 10) == []


def test_vectors_are_optional_per_point(store: VectorStore) -> None:
    only_sparse, only_dense = str(uuid.uuid4()), str(uuid.uuid4())
    store.upsert(
        SPEC.name,
        [
            VectorPoint(only_sparse, {"s": 1}, sparse=SparseVector([5], [1.0])),
            VectorPoint(only_dense, {"d": 1}, dense=dense(1, 1)),
        ],
    )
    assert ids_of(store.search_dense(SPEC.name, dense(1, 1), 10)) == {only_dense}
    assert ids_of(store.search_sparse(SPEC.name, SparseVector([5], [1.0]), 10)) == {only_sparse}
    assert store.count(SPEC.name) == 2


FILTERS: list[tuple[PayloadFilter, Callable[[dict[str, Any]], bool]]] = [
    (PayloadFilter(equals={"project": "p1"}), lambda p: p["project"] == "p1"),
    (PayloadFilter(equals={"pinned": True}), lambda p: p["pinned"]),
    (PayloadFilter(equals={"topic": 3}), lambda p: p["topic"] == 3),
    (PayloadFilter(equals={"importance": 0.5}), lambda p: p["importance"] == 0.5),
    (PayloadFilter(any_of={"project": ["p0", "p2"]}), lambda p: p["project"] in ("p0", "p2")),
    (PayloadFilter(any_of={"topic": [1, 2]}), lambda p: p["topic"] in (1, 2)),
    (PayloadFilter(any_of={"project": []}), lambda p: False),
    (PayloadFilter(ranges={"importance": (0.2, 0.5)}), lambda p: 0.2 <= p["importance"] <= 0.5),
    (PayloadFilter(ranges={"importance": (None, 0.1)}), lambda p: p["importance"] <= 0.1),
    (PayloadFilter(ranges={"i": (50, None)}), lambda p: p["i"] >= 50),
    (PayloadFilter(not_equals={"kind": "note"}), lambda p: p["kind"] != "note"),
    (
        PayloadFilter(
            equals={"project": "p1"},
            ranges={"importance": (0.3, None)},
            not_equals={"kind": "decision"},
            any_of={"topic": [0, 1, 3]},
        ),
        lambda p: (
            p["project"] == "p1"
            and p["importance"] >= 0.3
            and p["kind"] != "decision"
            and p["topic"] in (0, 1, 3)
        ),
    ),
]


@pytest.mark.parametrize(("flt", "pred"), FILTERS)
def test_filters_apply_to_search_scroll_and_count(
    filtered: tuple[VectorStore, list[VectorPoint]],
    flt: PayloadFilter,
    pred: Callable[[dict[str, Any]], bool],
) -> None:
    store, points = filtered
    expected = {p.id for p in points if pred(p.payload)}
    assert store.count(SPEC.name, flt) == len(expected)
    assert ids_of(scroll_all(store, flt, limit=7)) == expected
    assert ids_of(store.search_dense(SPEC.name, dense(0, 0), 100, flt)) == expected
    assert ids_of(store.search_sparse(SPEC.name, SparseVector([0], [1.0]), 100, flt)) == expected
    top = store.search_dense(SPEC.name, dense(2, 0), 3, flt)
    assert all(pred(h.payload) for h in top)


def test_scroll_pages_cover_every_point_once(store: VectorStore) -> None:
    points = make_points(250)
    store.upsert(SPEC.name, points)
    seen: list[str] = []
    offset: str | None = None
    pages = 0
    while True:
        page, offset = store.scroll(SPEC.name, limit=64, offset=offset)
        assert len(page) <= 64
        assert all(p.payload for p in page)
        seen += [p.id for p in page]
        pages += 1
        if offset is None:
            break
        assert isinstance(offset, str)
    assert pages == 4
    assert len(seen) == len(set(seen)) == 250
    assert set(seen) == ids_of(points)


def test_latest_returns_the_highest_values_first_within_the_filter(
    filtered: tuple[VectorStore, list[VectorPoint]],
) -> None:
    store, points = filtered
    flt = PayloadFilter(equals={"project": "p1"}, ranges={"i": (None, 60)})
    got = store.latest(SPEC.name, flt, "importance", 5)
    wanted = sorted(
        (p for p in points if p.payload["project"] == "p1" and p.payload["i"] <= 60),
        key=lambda p: -p.payload["importance"],
    )
    assert [p.payload["importance"] for p in got] == [p.payload["importance"] for p in wanted[:5]]
    assert all(p.payload["project"] == "p1" and p.payload["i"] <= 60 for p in got)


# --------------------------------------------------------------------------- context vectors
# Kept by the core (core/context_vectors.py) over the plain port: a sibling collection that each
# engine stores as any other, under the name and layout that stores made before have on disk.

CONTEXT_SPEC = CollectionSpec("threads", DIM, sparse=True, keyword_indexes=("project",))


def test_context_vectors_are_searched_apart_from_own_vectors(store: VectorStore) -> None:
    vectors = context_vectors(store, [CONTEXT_SPEC.name])
    vectors.ensure_collection(CONTEXT_SPEC)
    assert vectors.has_context(CONTEXT_SPEC.name) and not vectors.has_context(SPEC.name)
    turn, plain = str(uuid.uuid4()), str(uuid.uuid4())
    vectors.upsert(
        CONTEXT_SPEC.name,
        [
            ContextPoint(
                turn,
                {"n": 1},
                dense=dense(0, 1),
                sparse=SparseVector([1], [1.0]),
                context_dense=dense(2, 1),
                context_sparse=SparseVector([1, 9], [1.0, 1.0]),
            ),
            VectorPoint(plain, {"n": 2}, dense=dense(2, 2), sparse=SparseVector([9], [1.0])),
        ],
    )
    # By own vectors the plain point matches topic 2 / term 9; in context only the turn does.
    assert vectors.search_dense(CONTEXT_SPEC.name, dense(2, 5), 1)[0].id == plain
    assert ids_of(vectors.search_dense(CONTEXT_SPEC.name, dense(2, 5), 10, context=True)) == {turn}
    assert ids_of(vectors.search_sparse(CONTEXT_SPEC.name, SparseVector([9], [1.0]), 10)) == {plain}
    in_context = vectors.search_sparse(CONTEXT_SPEC.name, SparseVector([9], [1.0]), 10, context=True)
    assert ids_of(in_context) == {turn}
    # A collection without context vectors answers context searches with nothing.
    vectors.upsert(SPEC.name, make_points(3))
    assert vectors.search_dense(SPEC.name, dense(0, 0), 10, context=True) == []
    # The pair is a point of "<name>__context" in the store: same id and payload, its vectors as
    # a point's own (the layout of stores written before the core kept it).
    assert context_collection(CONTEXT_SPEC.name) == "threads__context"
    (kept,) = store.retrieve("threads__context", [turn, plain], with_dense=True)
    assert kept.id == turn and kept.payload == {"n": 1}
    assert np.allclose(kept.dense or [], dense(2, 1), atol=1e-2)
    by_terms = store.search_sparse("threads__context", SparseVector([1, 9], [1.0, 1.0]), 10)
    assert ids_of(by_terms) == {turn}


def test_context_is_added_to_a_collection_made_without_it(make_store: MakeStore) -> None:
    """An older collection gains its context sibling on open: old points keep none, new ones do."""
    old = make_store()
    old.upsert(SPEC.name, make_points(5))
    old.close()
    vectors = context_vectors(make_store(), [SPEC.name])
    vectors.ensure_collection(SPEC)
    assert vectors.has_context(SPEC.name) and vectors.count(SPEC.name) == 5
    point = paired(make_points(1, start=10)[0], dense(1, 1), SparseVector([3], [1.0]))
    vectors.upsert(SPEC.name, [point])
    assert vectors.count(SPEC.name) == 6
    assert ids_of(vectors.search_dense(SPEC.name, dense(1, 1), 10, context=True)) == {point.id}
    # Rewritten without a context pair (it left its thread): the old pair goes too.
    point.context_dense = point.context_sparse = None
    vectors.upsert(SPEC.name, [point])
    assert vectors.search_dense(SPEC.name, dense(1, 1), 10, context=True) == []
    assert vectors.search_sparse(SPEC.name, SparseVector([3], [1.0]), 10, context=True) == []


def test_context_follows_payload_changes_deletes_and_optimize(store: VectorStore) -> None:
    vectors = context_vectors(store, [SPEC.name])
    vectors.ensure_collection(SPEC)
    points = [paired(p, p.dense, p.sparse) for p in make_points(40)]
    vectors.upsert(SPEC.name, points)
    first, second = points[0], points[1]
    vectors.overwrite_payload(SPEC.name, [VectorPoint(first.id, {**first.payload, "project": "moved"})])
    moved = vectors.search_dense(
        SPEC.name, first.dense or [], 5, PayloadFilter(equals={"project": "moved"}), context=True
    )
    assert ids_of(moved) == {first.id}
    assert moved[0].payload["project"] == "moved"
    vectors.delete(SPEC.name, [second.id])
    assert second.id not in ids_of(vectors.search_dense(SPEC.name, second.dense or [], 40, context=True))
    assert isinstance(optimize(vectors, SPEC.name), bool)  # the collection and its context sibling
    assert len(vectors.search_dense(SPEC.name, dense(0, 0), 100, context=True)) == 39
    assert len(vectors.search_sparse(SPEC.name, SparseVector([0], [1.0]), 100, context=True)) == 39


def test_context_ids_say_which_points_keep_a_context_pair(store: VectorStore) -> None:
    """Normalization finds memories of a thread that lost their context vectors this way."""
    vectors = context_vectors(store, [CONTEXT_SPEC.name])
    vectors.ensure_collection(CONTEXT_SPEC)
    with_pair, sparse_only, without = (str(uuid.uuid4()) for _ in range(3))
    vectors.upsert(
        CONTEXT_SPEC.name,
        [
            ContextPoint(with_pair, {}, dense=dense(0, 1), context_dense=dense(1, 1)),
            ContextPoint(sparse_only, {}, dense=dense(0, 2), context_sparse=SparseVector([4], [1.0])),
            VectorPoint(without, {}, dense=dense(0, 3)),
        ],
    )
    unknown = str(uuid.uuid4())
    found = vectors.context_ids(CONTEXT_SPEC.name, [with_pair, sparse_only, without, unknown])
    assert found == {with_pair, sparse_only}
    assert vectors.context_ids(CONTEXT_SPEC.name, []) == set()
    vectors.upsert(CONTEXT_SPEC.name, [VectorPoint(with_pair, {}, dense=dense(0, 1))])  # pair dropped
    assert vectors.context_ids(CONTEXT_SPEC.name, [with_pair, sparse_only]) == {sparse_only}
    vectors.upsert(SPEC.name, make_points(2))  # a collection without context vectors: none
    assert vectors.context_ids(SPEC.name, [p.id for p in make_points(2)]) == set()


def test_retrieve_without_payload_says_which_ids_exist(store: VectorStore) -> None:
    points = make_points(3)
    store.upsert(SPEC.name, points[:2])
    got = store.retrieve(SPEC.name, [points[2].id, points[1].id, points[0].id], payload=False)
    assert [(p.id, p.payload) for p in got] == [(points[1].id, {}), (points[0].id, {})]


# --------------------------------------------------------------------------- lifecycle


def test_data_survives_close_and_reopen(make_store: MakeStore) -> None:
    store = make_store()
    points = make_points(40)
    store.upsert(SPEC.name, points)
    store.delete(SPEC.name, [points[0].id])
    store.close()
    again = make_store()
    assert again.count(SPEC.name) == 39
    assert again.retrieve(SPEC.name, [points[1].id])[0].payload == points[1].payload
    assert again.search_dense(SPEC.name, points[9].dense or [], 1)[0].id == points[9].id
    assert again.count(SPEC.name, PayloadFilter(equals={"project": "p2"})) == 13
    assert again.retrieve(SPEC.name, [points[0].id]) == []


def test_a_copy_taken_after_checkpoint_opens_with_every_write(make_store: MakeStore, tmp_path: Path) -> None:
    """checkpoint() leaves the store open and its files whole: an online backup copies them next,
    writes paused. A server keeps its own files (there it only must not disturb the store)."""
    store = make_store()
    points = make_points(40)
    store.upsert(SPEC.name, points)
    store.delete(SPEC.name, [points[0].id])
    store.checkpoint()
    store.upsert(SPEC.name, make_points(1, start=40))  # still open for writes
    assert store.count(SPEC.name) == 40
    if not isinstance(store, EdgeVectorStore):
        return
    store.checkpoint()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", "--sparse=always", str(tmp_path / "vectors"), str(copy)], check=True)
    again = EdgeVectorStore(copy)
    try:
        again.ensure_collection(SPEC)
        assert again.count(SPEC.name) == 40 and again.retrieve(SPEC.name, [points[0].id]) == []
        assert again.retrieve(SPEC.name, [points[1].id])[0].payload == points[1].payload
        assert again.search_dense(SPEC.name, points[9].dense or [], 1)[0].id == points[9].id
    finally:
        again.close()


def test_optimize_keeps_search_correct(make_store: MakeStore) -> None:
    store = make_store()
    points = make_points(3000)
    for i in range(0, 3000, 500):
        store.upsert(SPEC.name, points[i : i + 500])
    assert isinstance(optimize(store, SPEC.name), bool)
    assert store.count(SPEC.name) == 3000
    for k in (0, 777, 1500, 2999):
        assert store.search_dense(SPEC.name, points[k].dense or [], 1)[0].id == points[k].id
    flt = PayloadFilter(equals={"project": "p1"}, ranges={"importance": (0.5, None)})
    expected = {p.id for p in points if p.payload["project"] == "p1" and p.payload["importance"] >= 0.5}
    hits = store.search_dense(SPEC.name, dense(1, 5), 10, flt)
    assert len(hits) == 10 and ids_of(hits) <= expected
    assert store.count(SPEC.name, flt) == len(expected)
    store.close()
    again = make_store()
    assert again.search_dense(SPEC.name, points[1234].dense or [], 1)[0].id == points[1234].id


def test_search_and_writes_during_optimize(store: VectorStore) -> None:
    points = make_points(3000)
    store.upsert(SPEC.name, points)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            optimize(store, SPEC.name)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    added = make_points(40, start=5000)
    for n in range(40):
        k = (n * 97) % 3000
        assert store.search_dense(SPEC.name, points[k].dense or [], 1)[0].id == points[k].id
        store.upsert(SPEC.name, [added[n]])
        if n % 4 == 0:
            store.delete(SPEC.name, [points[n].id])
    while worker.is_alive():
        store.search_sparse(SPEC.name, SparseVector([0], [1.0]), 5)
        worker.join(timeout=0.05)
    assert not errors
    assert store.count(SPEC.name) == 3000 + 40 - 10
    assert len(store.retrieve(SPEC.name, [p.id for p in added])) == 40
    assert store.retrieve(SPEC.name, [points[0].id, points[36].id]) == []
    assert store.search_dense(SPEC.name, added[7].dense or [], 1)[0].id == added[7].id


def test_health_and_size(store: VectorStore) -> None:
    before = store.size_bytes()  # a server's estimate counts vectors and payloads: 0 when empty
    store.upsert(SPEC.name, make_points(200))
    health = store.health()
    assert health.state == "ok" and health.name == "vectors"
    assert health.extra["collections"] == {SPEC.name: 200}
    after = store.size_bytes()
    assert after >= before >= 0 and after > 0


# --------------------------------------------------------------------------- qdrant-client adapter specifics
# On qdrant-local and, when configured, qdrant-server; the rest runs without any server.


@pytest.fixture(params=QDRANT_BACKENDS)
def qdrant_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield request.param
    if request.param == "qdrant-server":
        for prefix in ("a_", "b_"):
            drop_server_collections(tmp_path / prefix)


def test_qdrant_prefix_keeps_projects_apart(qdrant_backend: str, tmp_path: Path) -> None:
    """Two prefixes on one server (or one local directory) never see each other's points."""
    root = tmp_path / "shared"

    def open_with(prefix: str) -> Any:
        store = qdrant_store(qdrant_backend, root, prefix=server_prefix(tmp_path / prefix))
        store.ensure_collection(SPEC)
        return store

    first = open_with("a_")
    first.upsert(SPEC.name, make_points(5))
    first.close()  # local mode: one client per directory at a time
    second = open_with("b_")
    assert second.count(SPEC.name) == 0
    second.upsert(SPEC.name, make_points(2, start=100))
    second.close()
    again = open_with("a_")
    assert again.count(SPEC.name) == 5
    again.close()


def test_qdrant_refuses_a_collection_with_another_layout(qdrant_backend: str, tmp_path: Path) -> None:
    store = qdrant_store(qdrant_backend, tmp_path)
    try:
        store.ensure_collection(SPEC)
        store.close()
        store = qdrant_store(qdrant_backend, tmp_path)
        with pytest.raises(ValidationError) as err:
            store.ensure_collection(replace(SPEC, dense_dim=DIM + 1))
        assert err.value.code == "VAL_COLLECTION_SPEC"
        with pytest.raises(ValidationError):
            store.ensure_collection(replace(SPEC, sparse=False))
    finally:
        store.close()
        if qdrant_backend == "qdrant-server":
            drop_server_collections(tmp_path)


def test_qdrant_needs_exactly_one_target(tmp_path: Path) -> None:
    adapter = qdrant_adapter()

    for kwargs in ({}, {"url": "http://127.0.0.1:1", "path": str(tmp_path)}, {"path": "x", "prefix": "a/b"}):
        with pytest.raises(ValidationError) as err:
            adapter(**kwargs)
        assert err.value.code == "VAL_QDRANT_TARGET" and "MEMORY_QDRANT__URL" in err.value.suggestion


def test_qdrant_unreachable_server_is_a_service_error() -> None:
    """Connection refused (nothing listens on the port): SVC_VECTOR_STORE naming the setting."""
    adapter = qdrant_adapter()

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        store = adapter(f"http://127.0.0.1:{port}", prefix="x_", timeout_s=2)
        with pytest.raises(ServiceUnavailableError) as err:
            store.ensure_collection(SPEC)
        assert err.value.code == "SVC_VECTOR_STORE"
        assert "MEMORY_QDRANT__URL" in err.value.suggestion
        health = store.health()
        assert health.state == "unavailable" and f"127.0.0.1:{port}" in health.detail
        store.close()
        assert store.health().state == "unavailable"


def test_qdrant_error_status_and_timeout_are_service_errors() -> None:
    """A refusal (HTTP 401) and a server that never answers (timeout) both read SVC_VECTOR_STORE."""
    adapter = qdrant_adapter()

    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"status": {"error": "Must provide an API key"}, "time": 0}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:  # keep the test output clean
            pass

    server = HTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.warns(UserWarning, match="insecure connection"):  # the client's own warning
            store = adapter(f"http://127.0.0.1:{server.server_port}", api_key="wrong", timeout_s=2)
        with pytest.raises(ServiceUnavailableError) as err:
            store.ensure_collection(SPEC)
        assert err.value.details["status"] == 401 and "MEMORY_QDRANT__API_KEY" in err.value.suggestion
        store.close()
    finally:
        server.shutdown()
        server.server_close()
    with socket.socket() as silent:  # listening, never accepting: the request times out
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        store = adapter(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout_s=1)
        with pytest.raises(ServiceUnavailableError) as err:
            store.ensure_collection(SPEC)
        assert err.value.code == "SVC_VECTOR_STORE"
        store.close()


def test_qdrant_local_memory_mode() -> None:
    adapter = qdrant_adapter()

    store = adapter(path=":memory:")
    store.ensure_collection(SPEC)
    store.upsert(SPEC.name, make_points(10))
    assert store.count(SPEC.name) == 10 and store.size_bytes() > 0
    store.close()
    assert not (Path.cwd() / ":memory:").exists()


# --------------------------------------------------------------------------- qdrant-edge specifics
# Edge only: what the embedded engine does itself (a server optimizes and persists on its own).


def test_edge_optimize_runs_beside_searches_and_replays_writes(tmp_path: Path) -> None:
    """The HNSW build runs in a child process: searches are served meanwhile (in-process it holds the
    GIL throughout), and writes made during it are replayed onto the swapped-in shard."""
    store = EdgeVectorStore(tmp_path, indexing_threshold_kb=64)
    store.ensure_collection(SPEC)
    points = make_points(3000)
    store.upsert(SPEC.name, points)
    late = make_points(3, start=9000)
    real = store._optimize_copy
    served_during: list[int] = []

    def optimize_copy(coll: Any, work: Path) -> bool:
        store.upsert(SPEC.name, late)  # journalled: the copy does not have them
        store.delete(SPEC.name, [points[1].id])
        result: dict[str, bool] = {}
        child = threading.Thread(target=lambda: result.update(ok=real(coll, work)))
        child.start()
        n = 0
        while child.is_alive() and n < 50:
            probe = points[2 + n % 2998]
            assert store.search_dense(SPEC.name, probe.dense or [], 1)[0].id == probe.id
            n += 1
        served_during.append(n)
        child.join()
        return result["ok"]

    store._optimize_copy = optimize_copy  # type: ignore[method-assign]
    assert store.optimize(SPEC.name) is True
    assert served_during[0] == 50  # in-process, the build would hold the GIL: 0 served
    assert store.count(SPEC.name) == 3002
    assert store.retrieve(SPEC.name, [points[1].id]) == []
    assert store.search_dense(SPEC.name, late[2].dense or [], 1)[0].id == late[2].id
    assert not list(tmp_path.glob(".*"))  # work and old dirs removed
    store.close()


def test_edge_optimize_covers_the_context_sibling(tmp_path: Path) -> None:
    """With a 1 KB threshold both the collection and its context sibling really get HNSW."""
    store = EdgeVectorStore(tmp_path, indexing_threshold_kb=1)
    vectors = context_vectors(store, [SPEC.name])
    try:
        assert isinstance(vectors, Maintainable)  # as its engine is
        vectors.ensure_collection(SPEC)
        points = [paired(p, p.dense, p.sparse) for p in make_points(40)]
        vectors.upsert(SPEC.name, points)
        assert vectors.optimize(SPEC.name)
        assert len(vectors.search_dense(SPEC.name, dense(0, 0), 100, context=True)) == 40
        assert not list(tmp_path.glob(".*"))
    finally:
        vectors.close()


def test_edge_recovers_from_a_swap_cut_short(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path)
    store.ensure_collection(SPEC)
    store.upsert(SPEC.name, make_points(10))
    store.close()
    # Crash after the live shard was set aside and a half-made one put in its place.
    os.rename(tmp_path / SPEC.name, tmp_path / f".{SPEC.name}.old")
    (tmp_path / SPEC.name).mkdir()
    (tmp_path / f".{SPEC.name}.optimizing").mkdir()
    again = EdgeVectorStore(tmp_path)
    again.ensure_collection(SPEC)
    assert again.count(SPEC.name) == 10
    assert not list(tmp_path.glob(".*"))
    again.close()


@pytest.mark.parametrize("sync_writes", [True, False])
def test_edge_acknowledged_write_survives_sigkill(tmp_path: Path, sync_writes: bool) -> None:
    """Flushed or not, the WAL (an mmap-ed file) is in the page cache when upsert returns."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from memory_service.core.ports import CollectionSpec, VectorPoint\n"
        "from memory_service.stores.qdrant.edge import EdgeVectorStore\n"
        f"s = EdgeVectorStore(Path(sys.argv[1]), sync_writes={sync_writes})\n"
        f"s.ensure_collection(CollectionSpec('memories', {DIM}))\n"
        f"s.upsert('memories', [VectorPoint(sys.argv[2], {{'k': 'v'}}, dense=[1.0] * {DIM})])\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    pid = str(uuid.uuid4())
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), pid],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == -9, proc.stderr
    store = EdgeVectorStore(tmp_path)
    store.ensure_collection(CollectionSpec("memories", DIM))
    assert [p.payload for p in store.retrieve("memories", [pid])] == [{"k": "v"}]
    store.close()


def test_edge_close_during_optimize_stops_the_child(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path, indexing_threshold_kb=64)
    store.ensure_collection(SPEC)
    store.upsert(SPEC.name, make_points(3000))
    real = store._optimize_copy

    def optimize_copy(coll: Any, work: Path) -> bool:
        result: dict[str, bool] = {}
        child = threading.Thread(target=lambda: result.update(ok=real(coll, work)))
        child.start()
        while coll.optimizer is None and child.is_alive():
            child.join(timeout=0.001)
        store.close()  # what shutdown does while housekeeping optimises
        child.join()
        assert coll.optimizer.returncode == -9
        return result["ok"]

    store._optimize_copy = optimize_copy  # type: ignore[method-assign]
    assert store.optimize(SPEC.name) is False
    assert not list(tmp_path.glob(".*"))
    again = EdgeVectorStore(tmp_path)
    again.ensure_collection(SPEC)
    assert again.count(SPEC.name) == 3000
    again.close()


def _rss_of_indexes(root: Path, pattern: str = "/payload_index/") -> int:
    """Resident KB of this process's mappings of files under ``root`` whose path holds
    ``pattern`` (a regular expression; by default: payload index files)."""
    return resident_kb(lambda path: path.startswith(f"{root}/") and re.search(pattern, path) is not None)


def test_edge_empty_collection_holds_no_payload_index_until_its_first_points(tmp_path: Path) -> None:
    """The engine keeps ~5 MB of each index of a segment resident: an empty collection has none
    (the code collections of a store that indexed no code), the first upsert creates them."""
    spec = CollectionSpec(
        "empty", DIM, sparse=True, keyword_indexes=("project", "kind"), float_indexes=("importance",)
    )
    store = EdgeVectorStore(tmp_path)
    store.ensure_collection(spec)
    assert store.latest(spec.name, None, "importance", 3) == []  # ordering needs the index: none yet
    assert _rss_of_indexes(tmp_path) == 0  # each index would hold 5 MB
    points = make_points(40)
    store.upsert(spec.name, points)
    flt = PayloadFilter(equals={"project": "p1"})
    assert ids_of(store.scroll(spec.name, flt, 100)[0]) == {
        p.id for p in points if p.payload["project"] == "p1"
    }
    top = store.latest(spec.name, None, "importance", 3)
    assert [p.payload["importance"] for p in top] == sorted(
        (p.payload["importance"] for p in points), reverse=True
    )[:3]
    store.close()
    again = EdgeVectorStore(tmp_path)  # reopened with points: indexes kept, ordering works
    again.ensure_collection(spec)
    in_p1 = {p.id for p in points if p.payload["project"] == "p1"}
    assert ids_of(again.latest(spec.name, flt, "importance", 100)) == in_p1
    again.delete(spec.name, [p.id for p in points])
    again.close()
    emptied = EdgeVectorStore(tmp_path)  # empty again at open: its indexes are dropped
    emptied.ensure_collection(spec)
    assert emptied.latest(spec.name, None, "importance", 3) == []
    assert _rss_of_indexes(tmp_path) == 0
    emptied.upsert(spec.name, points[:5])
    assert len(emptied.latest(spec.name, None, "importance", 10)) == 5
    emptied.close()


UNREAD = "/(payload_index|wal)/|/vectors/chunk_"


def test_edge_gives_back_what_a_load_faults_in_and_searches_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a shard faults in every payload index in full, the WAL and an appendable segment's
    32 MB vector chunk; the adapter pages them out, searches with filters do not bring them
    back, writes that went quiet are paged out again, and nothing is lost."""
    import qdrant_edge as qe

    from memory_service.stores.qdrant import edge as qdrant_edge

    points = make_points(300)
    store = EdgeVectorStore(tmp_path)
    store.ensure_collection(SPEC)
    store.upsert(SPEC.name, points)
    store.close()
    raw = qe.EdgeShard.load(str(tmp_path / SPEC.name))  # the engine alone, for comparison
    assert _rss_of_indexes(tmp_path, UNREAD) > 30_000  # KB: three indexes, the chunk, the WAL
    raw.close()
    again = EdgeVectorStore(tmp_path)
    again.ensure_collection(SPEC)
    assert _rss_of_indexes(tmp_path, UNREAD) < 2_000
    flt = PayloadFilter(equals={"project": "p1"}, ranges={"importance": (0.3, None)})
    wanted = {p.id for p in points if p.payload["project"] == "p1" and p.payload["importance"] >= 0.3}
    for topic in range(4):
        hits = again.search_dense(SPEC.name, dense(topic, 1000 + topic), 300, flt)
        assert ids_of(hits) == wanted
    assert again.count(SPEC.name, flt) == len(wanted)
    assert [p.payload["importance"] for p in again.latest(SPEC.name, None, "importance", 2)] == [0.9, 0.9]
    assert _rss_of_indexes(tmp_path, "/(payload_index|wal)/") < 2_000  # searches read neither
    assert again.upkeep() is False  # nothing written since the load
    more = make_points(200, start=300)
    again.upsert(SPEC.name, more)
    coll = again._get(SPEC.name)  # type: ignore[attr-defined]
    assert coll.unflushed_since is not None  # durable by its WAL; the segments wait for upkeep
    assert _rss_of_indexes(tmp_path, "/wal/") > 0
    assert again.upkeep() is False  # not quiet yet, but the WAL it wrote is paged out already
    assert _rss_of_indexes(tmp_path, "/wal/") < 100
    assert coll.unflushed_since is not None
    touched = _rss_of_indexes(tmp_path, "/payload_index/")
    assert touched > 0  # the write faulted in the pages it wrote: kept, the next write needs them
    monkeypatch.setattr(qdrant_edge, "RELEASE_QUIET_SECONDS", 0.0)
    assert again.upkeep() is True  # went quiet: housekeeping gives memory back
    assert coll.unflushed_since is not None  # the segments wait longer
    monkeypatch.setattr(qdrant_edge, "QUIET_SECONDS", 0.0)
    assert again.upkeep() is False  # reported once
    assert coll.unflushed_since is None  # flushed
    assert _rss_of_indexes(tmp_path, "/payload_index/") >= touched  # kept for a minute
    assert again.upkeep() is False
    monkeypatch.setattr(qdrant_edge, "INDEX_QUIET_SECONDS", 0.0)
    assert again.upkeep() is False
    assert _rss_of_indexes(tmp_path, "/(payload_index|wal)/") < 2_000
    assert again.count(SPEC.name) == 500
    again.close()
    last = EdgeVectorStore(tmp_path)
    last.ensure_collection(SPEC)
    assert ids_of(scroll_all(last)) == ids_of(points + more)
    last.close()


def test_edge_upkeep_flushes_segments_during_a_long_run_of_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes that never go quiet still get their segments flushed every FLUSH_EVERY_SECONDS,
    so the WAL a load replays stays bounded; their pages stay in until the writes stop."""
    from memory_service.stores.qdrant import edge as qdrant_edge

    store = EdgeVectorStore(tmp_path)
    store.ensure_collection(SPEC)
    coll = store._get(SPEC.name)  # type: ignore[attr-defined]
    store.upsert(SPEC.name, make_points(50))
    assert store.upkeep() is False and coll.unflushed_since is not None
    monkeypatch.setattr(qdrant_edge, "FLUSH_EVERY_SECONDS", 0.0)
    store.upsert(SPEC.name, make_points(50, start=50))
    assert store.upkeep() is False  # flushed, though writes are still coming
    assert coll.unflushed_since is None and coll.written_at is not None
    store.close()
    again = EdgeVectorStore(tmp_path)
    again.ensure_collection(SPEC)
    assert again.count(SPEC.name) == 100
    again.close()


def test_edge_keeps_the_indexes_of_mostly_distinct_fields_on_disk(tmp_path: Path) -> None:
    """spec.disk_indexes: those keyword indexes are made on disk; a store made before the spec
    named a field gets its index moved at open, and filters on it answer as before."""
    import qdrant_edge as qe

    points = make_points(120)
    store = EdgeVectorStore(tmp_path)
    store.ensure_collection(SPEC)
    store.upsert(SPEC.name, points)
    store.close()
    moved = replace(SPEC, disk_indexes=("project",))
    again = EdgeVectorStore(tmp_path)
    again.ensure_collection(moved)
    flt = PayloadFilter(equals={"project": "p2", "kind": "note"})
    wanted = {p.id for p in points if p.payload["project"] == "p2" and p.payload["kind"] == "note"}
    assert ids_of(scroll_all(again, flt)) == wanted
    assert again.count(SPEC.name, flt) == len(wanted)
    again.close()
    schema = qe.EdgeShard.load(str(tmp_path / SPEC.name)).info().payload_schema
    assert schema["project"].params is not None and schema["project"].params.on_disk is True
    assert getattr(schema["kind"].params, "on_disk", None) is not True  # the others stay in memory
    fresh = EdgeVectorStore(tmp_path / "fresh")
    fresh.ensure_collection(moved)
    fresh.upsert(SPEC.name, points)
    assert ids_of(fresh.search_dense(SPEC.name, dense(2, 5), 120, flt)) == wanted
    fresh.close()
    made = qe.EdgeShard.load(str(tmp_path / "fresh" / SPEC.name)).info().payload_schema
    assert made["project"].params.on_disk is True
