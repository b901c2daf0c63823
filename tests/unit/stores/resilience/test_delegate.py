"""The delegating wrappers (stores/resilience/delegate.py): every port method exists and is routed.

A method added to a port Protocol must reach the breaker, the stand-in and the failover stores
without anyone restating it; these tests list the Protocol's methods independently and call
each one."""

from __future__ import annotations

import inspect
from typing import Any, Protocol

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Cache, ComponentHealth, GraphStore, Queue, QueueMessage
from memory_service.stores.resilience.delegate import PortDelegate, port_methods
from memory_service.stores.resilience.failover_cache import FailoverCache
from memory_service.stores.resilience.failover_queue import FailoverQueue
from memory_service.stores.resilience.graph_breaker import FailFastGraphStore
from memory_service.stores.resilience.unavailable import UnavailableGraphStore


def _methods(port: type) -> list[str]:
    return sorted(n for n, v in inspect.getmembers(port) if not n.startswith("_") and callable(v))


GRAPH_METHODS = _methods(GraphStore)
CACHE_METHODS = _methods(Cache)
QUEUE_METHODS = _methods(Queue)


class _Recorder:
    """A pure-logic stand-in for the store behind a wrapper: records calls, answers healthy."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def health(self) -> ComponentHealth:
        return ComponentHealth("graph", "ok", "fake")

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
            self.calls.append((name, args, kwargs))
            return (name, args, kwargs)

        return record


def _args(name: str, port: type = GraphStore) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A distinct value for each required positional parameter and each keyword-only one."""
    params = list(inspect.signature(getattr(port, name)).parameters.values())[1:]
    args = tuple(f"{name}.{p.name}" for p in params if p.default is p.empty and p.kind is not p.KEYWORD_ONLY)
    kwargs = {p.name: f"{name}.{p.name}" for p in params if p.kind is p.KEYWORD_ONLY}
    return args, kwargs


def test_port_methods_lists_every_graph_method() -> None:
    assert sorted(port_methods(GraphStore)) == GRAPH_METHODS
    assert {"upsert_nodes", "query", "health", "close", "checkpoint"} <= set(GRAPH_METHODS)


@pytest.mark.parametrize("wrapper", [FailFastGraphStore, UnavailableGraphStore])
def test_every_graph_method_is_stated_or_routed(wrapper: type[PortDelegate]) -> None:
    stated = {n for n in GRAPH_METHODS if n in vars(wrapper) and n not in wrapper.routed}
    assert stated | wrapper.routed == set(GRAPH_METHODS)
    assert stated == (
        {"health", "close"} if wrapper is FailFastGraphStore else {"health", "checkpoint", "close"}
    )
    assert isinstance(wrapper.__new__(wrapper), GraphStore)  # runtime_checkable: all present


@pytest.mark.parametrize("name", sorted(FailFastGraphStore.routed))
def test_breaker_passes_each_call_through_unchanged(name: str) -> None:
    inner = _Recorder()
    breaker = FailFastGraphStore(inner)
    args, kwargs = _args(name)
    assert getattr(breaker, name)(*args, **kwargs) == (name, args, kwargs)
    assert inner.calls == [(name, args, kwargs)]


@pytest.mark.parametrize("name", sorted(UnavailableGraphStore.routed))
def test_stand_in_fails_each_call_naming_it(name: str) -> None:
    cause = ServiceUnavailableError("disk says no", code="SVC_GRAPH")
    stand_in = UnavailableGraphStore(cause, backend="ladybug", path="/data/graph")
    args, kwargs = _args(name)
    with pytest.raises(ServiceUnavailableError) as info:
        getattr(stand_in, name)(*args, **kwargs)
    assert info.value.code == "SVC_GRAPH_STORE_DAMAGED" and "disk says no" in info.value.message
    assert info.value.details == {"backend": "ladybug", "path": "/data/graph", "operation": name}
    assert (stand_in.cause, stand_in.backend, stand_in.path) == (cause, "ladybug", "/data/graph")


def test_a_method_added_to_a_port_is_routed_without_restating_it() -> None:
    class Port(Protocol):
        def old(self, x: int) -> int: ...

        def added(self, x: int, *, y: int = 0) -> int: ...

    class Wrapper(PortDelegate, port=Port):
        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.seen: list[str] = []

        def around(self, name: str, call: Any) -> Any:
            self.seen.append(name)
            return call()

        def old(self, x: int) -> int:
            return -x

    class Inner:
        def old(self, x: int) -> int:
            return x

        def added(self, x: int, *, y: int = 0) -> int:
            return x + y

    wrapper = Wrapper(Inner())
    assert Wrapper.routed == {"added"}
    assert (wrapper.old(2), wrapper.added(2, y=3)) == (-2, 5)  # type: ignore[attr-defined]
    assert wrapper.seen == ["added"]
    assert inspect.signature(Wrapper.added).parameters.keys() == {"self", "x", "y"}  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- failover stores


def test_port_methods_lists_every_cache_and_queue_method() -> None:
    assert sorted(port_methods(Cache)) == CACHE_METHODS
    assert sorted(port_methods(Queue)) == QUEUE_METHODS
    assert {"get_many", "incr", "stats"} <= set(CACHE_METHODS)
    assert {"enqueue", "claim", "counts", "dead"} <= set(QUEUE_METHODS)


@pytest.mark.parametrize(
    ("wrapper", "port", "methods", "stated"),
    [
        (FailoverCache, Cache, CACHE_METHODS, {"health", "close"}),
        (
            FailoverQueue,
            Queue,
            QUEUE_METHODS,
            {"enqueue", "claim", "ack", "fail", "release", "replay_dead", "health", "close"},
        ),
    ],
)
def test_every_failover_method_is_stated_or_routed(
    wrapper: type[PortDelegate], port: type, methods: list[str], stated: set[str]
) -> None:
    own = {n for n in methods if n in vars(wrapper) and n not in wrapper.routed}
    assert own | wrapper.routed == set(methods)
    assert own == stated
    assert isinstance(wrapper.__new__(wrapper), port)  # runtime_checkable: all present


@pytest.mark.parametrize("name", sorted(FailoverCache.routed))
def test_failover_cache_passes_each_call_to_redis_while_it_answers(name: str) -> None:
    inner = _Recorder()
    cache = FailoverCache(inner)
    args, kwargs = _args(name, Cache)
    assert getattr(cache, name)(*args, **kwargs) == (name, args, kwargs)
    assert inner.calls == [(name, args, kwargs)]


class _Down(_Recorder):
    """A store that records each call, then fails it as an unreachable server does."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            raise ServiceUnavailableError("connection refused", code="SVC_REDIS")

        return fail


# Each routed Cache call while Redis is down: its arguments and its answer.
_CACHE_DOWN: dict[str, tuple[tuple[Any, ...], dict[str, Any], Any]] = {
    "get": (("ns", "k"), {}, None),
    "get_many": (("ns",), {"keys": ["a", "b", "a"]}, {}),
    "set": (("ns", "k", b"v"), {}, None),
    "set_many": (("ns", {"k": b"v"}), {"ttl_seconds": 5.0}, None),
    "delete_namespace": (("ns",), {}, 0),
    "incr": (("ns", "gen"), {}, 0),
    "stats": ((), {}, {"hits": 0.0, "misses": 0.0, "hit_rate": 0.0, "entries": 0.0}),
    "size_bytes": ((), {}, 0),
}


def test_every_routed_cache_call_has_an_answer_while_redis_is_down() -> None:
    assert set(_CACHE_DOWN) == FailoverCache.routed


@pytest.mark.parametrize("name", sorted(_CACHE_DOWN))
def test_failover_cache_answers_each_call_while_redis_is_down(name: str) -> None:
    inner = _Down()
    cache = FailoverCache(inner, probe_interval=60.0)
    args, kwargs, answer = _CACHE_DOWN[name]
    assert getattr(cache, name)(*args, **kwargs) == answer
    assert inner.calls == [(name, args, kwargs)] and cache.is_down
    assert getattr(cache, name)(*args, **kwargs) == answer  # not tried again before the interval
    assert len(inner.calls) == 1


def test_failover_cache_holds_back_what_an_outage_must_not_lose() -> None:
    cache = FailoverCache(_Down(), probe_interval=60.0)
    cache.get("ns", "k")  # type: ignore[attr-defined]
    cache.get_many("ns", keys=["a", "b", "a"])  # type: ignore[attr-defined]
    cache.incr("ns", "gen")  # type: ignore[attr-defined]
    cache.incr(namespace="ns", key="gen")  # type: ignore[attr-defined]
    cache.delete_namespace("search")  # type: ignore[attr-defined]
    assert cache.stats()["misses"] == 3.0  # type: ignore[attr-defined]
    assert cache._missed_incr == {("ns", "gen"): 2} and cache._missed_deletes == {"search"}


class _Side(_Recorder):
    """One queue of the two: records each call and answers it with ``answers[name]``."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__()
        self.answers = answers

    def __getattr__(self, name: str) -> Any:
        def answer(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return self.answers[name]

        return answer


def _message(i: str) -> QueueMessage:
    return QueueMessage(i, "sync", {"n": i}, 0)


_REDIS_ANSWERS = {
    "reclaim": 2,
    "dead": [_message("1-0"), _message("2-0")],
    "counts": {"pending": 1, "inflight": 2, "failed": 3},
}
_LOCAL_ANSWERS = {
    "reclaim": 5,
    "dead": [_message("7")],
    "counts": {"pending": 10, "inflight": 20, "failed": 30},
}
_JOINED = {
    "reclaim": 7,
    "dead": [_message("1-0"), _message("2-0")],  # the limit (2) given: Redis's are older
    "counts": {"pending": 11, "inflight": 22, "failed": 33},
}
_QUEUE_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "reclaim": (("sync",), {"min_idle_seconds": 1.0}),
    "dead": (("sync", 2), {}),
    "counts": (("sync",), {}),
}


def test_every_routed_queue_call_is_joined() -> None:
    assert set(_QUEUE_CALLS) == set(_JOINED) == FailoverQueue.routed


@pytest.mark.parametrize("name", sorted(_QUEUE_CALLS))
def test_failover_queue_asks_both_queues_and_joins_their_answers(name: str) -> None:
    redis, local = _Side(_REDIS_ANSWERS), _Side(_LOCAL_ANSWERS)
    queue = FailoverQueue(redis, local)  # type: ignore[arg-type]
    args, kwargs = _QUEUE_CALLS[name]
    assert getattr(queue, name)(*args, **kwargs) == _JOINED[name]
    assert redis.calls == local.calls == [(name, args, kwargs)]


@pytest.mark.parametrize("name", sorted(_QUEUE_CALLS))
def test_failover_queue_answers_with_the_local_queue_while_redis_is_down(name: str) -> None:
    redis, local = _Down(), _Side(_LOCAL_ANSWERS)
    queue = FailoverQueue(redis, local)  # type: ignore[arg-type]
    args, kwargs = _QUEUE_CALLS[name]
    assert getattr(queue, name)(*args, **kwargs) == _LOCAL_ANSWERS[name]
    assert redis.calls == local.calls == [(name, args, kwargs)]
