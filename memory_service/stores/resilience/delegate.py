"""One delegating mechanism for the store wrappers that treat every port method alike.

Why: the graph breaker (``graph_breaker.py``) and the damaged-graph stand-in (``unavailable.py``)
differ from the store behind them in one way each (fail fast while the server is down; fail
always), which used to be restated once per port method. A :class:`PortDelegate` subclass names
its port and states only what differs: every public method of the port Protocol that the
subclass does not define itself is generated at class creation and routed through one hook,
``around(name, call)``, where ``call()`` makes the same call on ``self.inner``. A method added
to the port is therefore routed too (``tests/unit/stores/resilience/test_delegate.py`` checks it).

The generated methods are not visible to a type checker: the one place that builds such a
wrapper casts it to its port (``factory.py``).
"""

from __future__ import annotations

import functools
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


def _routed(name: str, template: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(template)
    def method(self: PortDelegate, *args: Any, **kwargs: Any) -> Any:
        return self.around(name, lambda: getattr(self.inner, name)(*args, **kwargs))

    return method


class PortDelegate:
    """Base of a store wrapper: ``class X(PortDelegate, port=GraphStore)``.

    Methods the subclass defines are its own; every other method of ``port`` becomes
    ``around(name, lambda: self.inner.<name>(*args, **kwargs))``. ``inner`` is only read when
    ``call`` is run, so a stand-in with nothing behind it need not have one.
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

    def around(self, name: str, call: Callable[[], Any]) -> Any:
        """Run one port call; a subclass decides what happens before, instead of or after it."""
        return call()
