"""The delegating wrappers (stores/resilience/delegate.py): every port method exists and is routed.

A method added to a port Protocol must reach the breaker and the stand-in without anyone
restating it; these tests list the Protocol's methods independently and call each one."""

from __future__ import annotations

import inspect
from typing import Any, Protocol

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, GraphStore
from memory_service.stores.resilience.delegate import PortDelegate, port_methods
from memory_service.stores.resilience.graph_breaker import FailFastGraphStore
from memory_service.stores.resilience.unavailable import UnavailableGraphStore

GRAPH_METHODS = sorted(n for n, v in inspect.getmembers(GraphStore) if not n.startswith("_") and callable(v))


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


def _args(name: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A distinct value for each required positional parameter and each keyword-only one."""
    params = list(inspect.signature(getattr(GraphStore, name)).parameters.values())[1:]
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
