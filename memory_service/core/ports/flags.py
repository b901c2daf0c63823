"""The flags port: a few durable yes/no markers the core keeps between runs."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Flags(Protocol):
    """Named markers kept on disk (for example the writer's ``embeddings_complete``)."""

    def get(self, name: str) -> bool | None:
        """The marker's value (None: never set)."""
        ...

    def set(self, name: str, value: bool) -> None:
        """Set a marker durably (on disk when this returns)."""
        ...

    def close(self) -> None: ...
