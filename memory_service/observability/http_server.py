"""The HTTP side server: /health/live, /health/ready, /metrics, /stats, beside the MCP server.

Why the standard library's ``ThreadingHTTPServer`` in a thread: the MCP server speaks stdio on
its own event loop; four GET endpoints need no framework, and a scrape or a health check runs in
its own thread, so a slow store read never blocks a tool call (nor the other way round).

Readiness (``/health/ready``): the services are open and no component (vectors, graph, cache,
queue, embedding model) is ``unavailable``; ``degraded`` (a model still loading, a growing dead-
letter queue) is ready. This is the rule ``memory-cli health`` exits by, so both agree: a server
without its model still answers lexically, but it is not whole, and it says so with a 503.

Every request first passes the MCP endpoint's Host and Origin rule (:class:`.RequestRule`): on a
loopback bind, a page that rebinds its DNS name to 127.0.0.1 cannot read ``/stats`` (store paths,
counts) any more than it can call a tool.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from memory_service import __version__
from memory_service.core.errors import MemoryServiceError
from memory_service.observability import discovery
from memory_service.observability.gauges import ServiceGauges
from memory_service.observability.metrics import Metrics
from memory_service.transport.http_guard import RequestRule

logger = logging.getLogger(__name__)

JSON = "application/json"
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def health_report(services: Any) -> dict[str, Any]:
    """Each component's state and backend, the sync queue, and the verdict (memory-cli health's shape)."""
    parts = services.health()
    components = [
        {"component": p.name, "state": p.state, "backend": p.backend, "detail": p.detail} for p in parts
    ]
    try:
        sync: dict[str, Any] = services.sync.pending()
    except MemoryServiceError as exc:
        sync = {"error": exc.message}
    healthy = all(p.state != "unavailable" for p in parts)
    degraded = any(p.state == "degraded" for p in parts)
    status = "unavailable" if not healthy else "degraded" if degraded else "ok"
    return {"ready": healthy, "healthy": healthy, "status": status, "components": components, "sync": sync}


class SideServer:
    """One HTTP listener for one MCP server's services; ``services()`` is None until they open."""

    def __init__(
        self,
        data_dir: Path,
        services: Callable[[], Any],
        failure: Callable[[], MemoryServiceError | None],
        metrics: Metrics | None,
        httpd: ThreadingHTTPServer,
        rule: RequestRule,
    ) -> None:
        self.data_dir = data_dir
        self.rule = rule
        self._services = services
        self._failure = failure
        self._metrics = metrics
        self._httpd = httpd
        host, port = httpd.server_address[:2]
        self.port = int(port)
        self.url = discovery.base_url(str(host), self.port)
        self._thread = threading.Thread(target=httpd.serve_forever, name="http-side-server", daemon=True)

    @classmethod
    def start(
        cls,
        host: str,
        port: int,
        data_dir: Path,
        services: Callable[[], Any],
        failure: Callable[[], MemoryServiceError | None],
        metrics: Metrics | None,
    ) -> SideServer | None:
        """Listen on host:port (0: a free port) and serve in a thread; None when the port is taken,
        which must not stop the MCP server (two servers, parallel tests): a warning says so."""
        handler = type("Handler", (_Handler,), {})
        try:
            server_class = _Server6 if ":" in host else _Server
            httpd = server_class((host, port), handler)
        except OSError as exc:
            logger.warning(
                "HTTP side server not started on %s:%s (%s): /health and /metrics are off for this "
                "server. Set MEMORY_SERVER__HTTP_PORT to a free port (0 picks one), or "
                "MEMORY_SERVER__HTTP_ENABLED=false.",
                host,
                port,
                exc.strerror or exc,
            )
            return None
        server = cls(data_dir, services, failure, metrics, httpd, RequestRule.for_bind(host, token=None))
        handler.side = server  # type: ignore[attr-defined]
        if metrics is not None:
            metrics.registry.register(ServiceGauges(services, metrics))
        server._thread.start()
        logger.info("HTTP side server on %s (/health/live, /health/ready, /metrics, /stats)", server.url)
        return server

    def publish(self) -> None:
        """Tell memory-cli where we are: call once this process owns the data directory."""
        try:
            discovery.publish(self.data_dir, self.url)
        except OSError as exc:
            logger.warning("could not write %s: %s", discovery.HTTP_FILENAME, exc)

    def stop(self) -> None:
        """Withdraw the address, stop listening and wait for requests in progress."""
        discovery.withdraw(self.data_dir)
        self._httpd.shutdown()
        self._httpd.server_close()

    # ------------------------------------------------------------------ endpoints

    def answer(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        """The response to a GET of ``path`` with these headers (names in lower case)."""
        refusal = self.rule.refusal(headers)
        if refusal is not None:
            logger.warning("refused an HTTP side server request: %s", refusal.message)
            return _json(refusal.http_status, refusal.to_envelope())
        return self.route(path)

    def route(self, path: str) -> tuple[int, str, bytes]:
        if path == "/health/live":
            return _json(200, {"status": "alive", "pid": os.getpid(), "data_dir": str(self.data_dir)})
        if path == "/health/ready":
            return self._ready()
        if path == "/metrics":
            if self._metrics is None:
                return _json(404, {"error": "metrics are off (MEMORY_SERVER__METRICS_ENABLED=false)"})
            return 200, PROMETHEUS_TEXT, self._metrics.exposition()
        if path == "/stats":
            services = self._services()
            if services is None:
                return _json(503, self._not_open())
            return _json(200, services.stats())
        return _json(404, {"error": f"no such endpoint: {path}", "endpoints": ENDPOINTS})

    def _ready(self) -> tuple[int, str, bytes]:
        services = self._services()
        if services is None:
            return _json(503, self._not_open())
        report = {**health_report(services), "pid": os.getpid(), "version": __version__}
        return _json(200 if report["ready"] else 503, report)

    def _not_open(self) -> dict[str, Any]:
        error = self._failure()
        if error is None:
            return {"ready": False, "healthy": False, "status": "starting", "components": [], "sync": {}}
        return {
            "ready": False,
            "healthy": False,
            "status": "failed",
            "components": [],
            "sync": {},
            "error": error.to_envelope()["error"],
        }


ENDPOINTS = ["/health/live", "/health/ready", "/metrics", "/stats"]


def _json(status: int, body: dict[str, Any]) -> tuple[int, str, bytes]:
    return status, JSON, json.dumps(body).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() waits for requests in progress before the stores close
    block_on_close = True


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    side: SideServer
    timeout = 10  # a client that connects and says nothing does not hold a thread for long
    server_version = f"memory-service/{__version__}"

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        try:
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, content_type, body = self.side.answer(path, headers)
        except MemoryServiceError as exc:
            status, content_type, body = _json(503, {"error": exc.to_envelope()["error"]})
        except Exception:
            logger.exception("HTTP side server: %s failed", path)
            status, content_type, body = _json(500, {"error": f"{path} failed; see the server log"})
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("http %s " + format, self.address_string(), *args)
