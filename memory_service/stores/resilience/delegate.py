"""One delegating mechanism for the store wrappers that treat port methods alike.

Why: the graph breaker (``graph_breaker.py``), the damaged-graph stand-in (``unavailable.py``)
and the Redis failover stores (``failover_cache.py``, ``failover_queue.py``) differ from the
store behind them in one way each (fail fast while the server is down; fail always; answer
without Redis while it is down), which used to be restated once per port method. A
:class:`PortDelegate` subclass names its port and states only what differs: every public method
of the port Protocol that the subclass does not define itself is generated at class creation and
routed through one hook, ``around(name, call)``. ``call`` is a :class:`PortCall`: ``call()``
makes the same call on ``self.inner``, ``call.on(store)`` on another store (a fallback), and
``call.arguments`` names its arguments. A method added to the port is therefore routed too
(``tests/unit/stores/resilience/test_delegate.py`` checks it).

The generated methods are not visible to a type checker: the one place that builds such
wrappers casts each to its port (``factory.py``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ClassVar


def port_methods(port: type) -> tuple[str, ...]:
    """The public method names of a port Protocol (and of the Protocols it extends)."""
    names: dict[str, None] = {}
    for klass in reversed(port.__mro__):
        if klass is object or klass.__module__ == "typing":
            continue
        names.update((n, None) for n, v in vars(klass).items() if not n.startswith("_") and callable(v))
    return tuple(names)


class PortCall:
    """One call of a routed port method, as the wrapper received it."""

    __slots__ = ("_owner", "_signature", "args", "kwargs", "name")

    def __init__(
        self,
        owner: PortDelegate,
        name: str,
        signature: inspect.Signature,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self._owner = owner
        self._signature = signature
        self.name = name
        self.args = args
        self.kwargs = kwargs

    def __call__(self) -> Any:
        """The same call on the wrapper's ``inner`` (read only now)."""
        return self.on(self._owner.inner)

    def on(self, store: Any) -> Any:
        """The same call on ``store``."""
        return getattr(store, self.name)(*self.args, **self.kwargs)

    @property
    def arguments(self) -> dict[str, Any]:
        """Every argument by its parameter name, defaults filled in (``self`` left out)."""
        bound = self._signature.bind(self._owner, *self.args, **self.kwargs)
        bound.apply_defaults()
        return dict(list(bound.arguments.items())[1:])


def _routed(name: str, template: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(template)

    @functools.wraps(template)
    def method(self: PortDelegate, *args: Any, **kwargs: Any) -> Any:
        return self.around(name, PortCall(self, name, signature, args, kwargs))

    return method


class PortDelegate:
    """Base of a store wrapper: ``class X(PortDelegate, port=GraphStore)``.

    Methods the subclass defines are its own; every other method of ``port`` becomes
    ``around(name, PortCall(...))``, whose ``call()`` is ``self.inner.<name>(*args, **kwargs)``.
    ``inner`` is only read when ``call`` is run, so a stand-in with nothing behind it, or a
    wrapper that calls its stores through ``call.on``, need not have one.
    """

    port: ClassVar[type]
    routed: ClassVar[frozenset[str]] = frozenset()  # the port methods generated for this class
    inner: Any

    def __init_subclass__(cls, *, port: type | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if port is None:
            return
        cls.port = port
        own = set().union(*(vars(k) for k in cls.__mro__ if k is not PortDelegate and k is not object))
        routed = [name for name in port_methods(port) if name not in own]
        for name in routed:
            method = _routed(name, getattr(port, name))
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
        cls.routed = frozenset(routed)

    def around(self, name: str, call: PortCall) -> Any:
        """Run one port call; a subclass decides what happens before, instead of or after it."""
        return call()
