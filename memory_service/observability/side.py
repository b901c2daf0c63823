"""Start the HTTP side server and its metrics for one MCP server, as the settings say.

Kept apart from ``server.py`` so the MCP surface only calls one function, and so that a server
with HTTP off imports no prometheus_client at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memory_service.core.errors import MemoryServiceError
from memory_service.settings import Settings

if TYPE_CHECKING:
    from memory_service.observability.http_server import SideServer
    from memory_service.observability.metrics import Metrics


def start_side_server(
    settings: Settings,
    services: Callable[[str], Any],
    failure: Callable[[str], MemoryServiceError | None],
) -> tuple[SideServer | None, Metrics | None]:
    """The listening side server and the metrics to instrument with; (None, None) when HTTP is off
    or its port is taken (nobody could scrape what would be recorded).

    ``services("services")`` / ``failure("error")`` read the lifespan's holders (dict.get).
    """
    server = settings.server
    if not server.http_enabled:
        return None, None
    from memory_service.observability.http_server import SideServer
    from memory_service.observability.metrics import Metrics

    metrics = Metrics() if server.metrics_enabled else None
    side = SideServer.start(
        server.http_host,
        server.http_port,
        settings.resolved_data_dir,
        lambda: services("services"),
        lambda: failure("error"),
        metrics,
    )
    return side, (metrics if side is not None else None)
