"""MCP over streamable HTTP (``memory-service serve --http HOST:PORT``), for shared and remote use.

The daemon builds one MCP server and calls, in order: :func:`check_bind` (refuse an exposed bind
without a token), :func:`http_app` (the SDK's app at ``/mcp`` behind :class:`.HttpGuard`) and
:func:`serve_http` (:mod:`.http_serve`: uvicorn on a socket we bind, until cancelled). The SDK's
session manager enters the MCP server's lifespan once for the whole app, not per session, so
every HTTP session shares the opened stores.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from memory_service.core.errors import ValidationError
from memory_service.settings import Settings
from memory_service.transport.http_guard import HttpGuard, RequestRule, is_loopback
from memory_service.transport.http_serve import check_port, serve_http

__all__ = ["check_bind", "check_port", "http_app", "is_loopback", "parse_bind", "read_token", "serve_http"]

PATH = "/mcp"
MIN_TOKEN_CHARS = 16
# The largest valid request must fit: memory_bulk_add takes 100 memories of 100,000 characters,
# up to 6 bytes each once JSON-escaped. (The SDK's default, 4 MiB, would refuse it with a 413.)
# The body is read only after HttpGuard let the request through.
MAX_REQUEST_BYTES = 64 * 1024 * 1024
_BIND_FORMS = "Use HOST:PORT, e.g. 127.0.0.1:8765, [::1]:8765 or :8765 (loopback); port 0 takes a free port."
_TOKEN_HOWTO = (
    "Set MEMORY_SERVER__MCP_TOKEN (or pass --token-file FILE) to a secret of at least "
    f"{MIN_TOKEN_CHARS} characters, e.g. from: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
)
_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?\.?")
_DIGITS_AND_DOTS = re.compile(r"[0-9.]+")


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (loopback) as (host, port)."""
    raw = text.strip()
    if raw.isascii() and raw.isdigit():
        raw = f":{raw}"
    host, sep, port_text = raw.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        valid_host = _is_ip(host, version=6)
    else:  # a bare IPv6 address is ambiguous (which colon starts the port?): brackets required
        valid_host = not host or _is_ip(host, version=4) or _is_name(host)
    digits = sep and port_text.isascii() and port_text.isdigit() and len(port_text) <= 5
    port = int(port_text) if digits else -1
    if not valid_host or not 0 <= port <= 65535:
        raise ValidationError(
            f"Invalid --http address '{text}'",
            code="CFG_HTTP_BIND",
            details={"field": "--http", "provided": text, "expected": "HOST:PORT"},
            suggestion=_BIND_FORMS,
        )
    return host or "127.0.0.1", port


def read_token(settings: Settings, token_file: str | None) -> str | None:
    """The bearer token: the file's content (stripped) if given, else MEMORY_SERVER__MCP_TOKEN."""
    if token_file is None:
        secret = settings.server.mcp_token
        return (secret.get_secret_value().strip() or None) if secret is not None else None
    try:
        token = Path(token_file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(
            f"Cannot read the token file '{token_file}': {getattr(exc, 'strerror', None) or exc}",
            code="CFG_TOKEN_FILE",
            details={"field": "--token-file", "provided": token_file},
            suggestion="Point --token-file at a readable UTF-8 file holding the token on one line.",
        ) from exc
    if not token:
        raise ValidationError(
            f"The token file '{token_file}' is empty",
            code="CFG_TOKEN_FILE",
            details={"field": "--token-file", "provided": token_file},
            suggestion="Write the token into the file (one line), or set MEMORY_SERVER__MCP_TOKEN instead.",
        )
    return token


def check_bind(host: str, token: str | None) -> None:
    """Refuse a bind anyone on the network could use without a token, and a guessable token."""
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not _sendable(token)):
        raise ValidationError(
            f"The MCP bearer token must be at least {MIN_TOKEN_CHARS} visible ASCII characters without "
            f"spaces (it has {len(token)} characters)",
            code="CFG_HTTP_TOKEN",
            details={"field": "token", "min_length": MIN_TOKEN_CHARS},
            suggestion=_TOKEN_HOWTO,
        )
    if token is None and not is_loopback(host):
        raise ValidationError(
            f"Serving MCP over HTTP on '{host}' (not loopback) requires a bearer token",
            code="CFG_HTTP_TOKEN_REQUIRED",
            details={"field": "--http", "provided": host},
            suggestion=f"{_TOKEN_HOWTO}; or bind to 127.0.0.1 for local use only.",
        )


def http_app(
    mcp: Server[Any],
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_origins: Sequence[str] = (),
) -> Starlette:
    """The SDK's streamable HTTP app at ``/mcp``, behind the Host, Origin and token checks.

    A loopback bind accepts loopback Host names and pages from loopback origins (the SDK's rule);
    another bind accepts its own host name (any, for ``0.0.0.0``/``::``) and no browser origin
    but ``allowed_origins``. ``port`` is not checked in Host: a proxy may forward another one.
    """
    del port  # the listening socket, not the app, decides the port (port 0 is only known later)
    # HttpGuard checks Host and Origin in front of the SDK; the SDK's own (plain-text) check is
    # off so that the two can never disagree. It still refuses a POST that is not JSON.
    app = mcp.streamable_http_app(
        streamable_http_path=PATH,
        max_request_body_size=MAX_REQUEST_BYTES,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host,
    )
    app.add_middleware(
        HttpGuard, rule=RequestRule.for_bind(host, token=token, allowed_origins=allowed_origins)
    )
    return app


def _is_ip(text: str, *, version: int | None = None) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return version is None or address.version == version


def _is_name(text: str) -> bool:
    """A DNS name (``localhost``, ``build-box.lan``); digits and dots only would be a bad IPv4."""
    return bool(_HOST_NAME.fullmatch(text)) and not _DIGITS_AND_DOTS.fullmatch(text)


def _sendable(token: str) -> bool:
    """Whether a client can send the token in an HTTP header as is (visible ASCII, no spaces)."""
    return all("!" <= char <= "~" for char in token)
