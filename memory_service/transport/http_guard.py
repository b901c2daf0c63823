"""The checks in front of MCP over streamable HTTP: Host, Origin, bearer token.

:class:`RequestRule` is the rule itself (pure: headers in, refusal or None out), built for a bind
address by :meth:`RequestRule.for_bind`; :class:`HttpGuard` applies it as ASGI middleware in front
of the SDK, and the HTTP side server (``/health``, ``/metrics``, ``/stats``) applies the same rule
to its requests, so a DNS-rebinding page can read neither.

Why our own ASGI middleware rather than the SDK's ``TransportSecuritySettings``: the SDK checks
Host and Origin together or not at all, so it cannot express a wildcard bind (``0.0.0.0``, where
clients reach us under names we cannot know, yet browser origins must still be refused), and it
answers in plain text; every refusal here is the seed-001 envelope the rest of the service speaks.
The allow-lists use the SDK's pattern form (``http://localhost:*`` matches any port).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
from collections.abc import Collection, Mapping, Sequence

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from memory_service.core.errors import ForbiddenError, MemoryServiceError, UnauthorizedError

logger = logging.getLogger(__name__)

# What the SDK allows on a loopback bind: pages served from this machine (the MCP inspector...).
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_TOKEN_HINT = "Send the header 'Authorization: Bearer <token>' with the server's MCP token."


class RequestRule:
    """Which requests a listener serves, by their Host, Origin and bearer token.

    Args:
        token: the bearer token every request must carry; None: no token needed.
        hosts: host names the ``Host`` header may carry; None: any (a wildcard bind).
        origins: browser origins allowed (exact, or ``scheme://host:*``); a request without an
            ``Origin`` header is not from a browser page and passes.
    """

    def __init__(self, *, token: str | None, hosts: Collection[str] | None, origins: Sequence[str]) -> None:
        # Digests have one length whatever the token's, so compare_digest leaks not even that.
        self._digest = _digest(token) if token is not None else None
        self._hosts = None if hosts is None else frozenset(h.lower() for h in hosts)
        self._origins = tuple(o.lower() for o in origins)

    @classmethod
    def for_bind(cls, host: str, *, token: str | None, allowed_origins: Sequence[str] = ()) -> RequestRule:
        """The rule for a listener on ``host``: a loopback bind accepts loopback Host names and
        pages from loopback origins (the SDK's rule); another bind accepts its own host name (any,
        for ``0.0.0.0``/``::``) and no browser origin but ``allowed_origins``. The port is not
        checked in Host: a proxy may forward another one."""
        name = host_name(f"[{host}]" if ":" in host else host)
        if is_loopback(host):
            return cls(
                token=token, hosts=LOOPBACK_HOSTS | {name}, origins=(*LOOPBACK_ORIGINS, *allowed_origins)
            )
        hosts = None if is_wildcard(name) else frozenset({name})
        return cls(token=token, hosts=hosts, origins=tuple(allowed_origins))

    def refusal(self, headers: Mapping[str, str]) -> MemoryServiceError | None:
        """Why the request may not be served, or None when it may (header names in lower case)."""
        host = headers.get("host", "")
        if self._hosts is not None and host_name(host) not in self._hosts:
            return ForbiddenError(
                f"Host '{host}' is not served here",
                code="AUTH_HOST",
                details={"field": "Host", "provided": host, "allowed": sorted(self._hosts)},
                suggestion="Connect with the address the server was started on (DNS rebinding protection).",
            )
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self._origins):
            return ForbiddenError(
                f"Origin '{origin}' is not allowed",
                code="AUTH_ORIGIN",
                details={"field": "Origin", "provided": origin, "allowed": list(self._origins)},
                suggestion="Browser pages may call this server only from an allowed origin; "
                "other clients should send no Origin header.",
            )
        if self._digest is None:
            return None
        scheme, _, credentials = headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            return UnauthorizedError(
                "This MCP server requires a bearer token",
                code="AUTH_TOKEN_MISSING",
                details={"field": "Authorization"},
                suggestion=_TOKEN_HINT,
            )
        if not hmac.compare_digest(_digest(credentials.strip()), self._digest):
            return UnauthorizedError(
                "The bearer token is not valid",
                code="AUTH_TOKEN_INVALID",
                details={"field": "Authorization"},
                suggestion=_TOKEN_HINT,
            )
        return None


class HttpGuard:
    """ASGI middleware refusing what the MCP spec says a server must refuse, before the SDK runs.

    Args:
        app: the SDK's streamable HTTP app.
        rule: which requests pass (:meth:`RequestRule.for_bind`).
    """

    def __init__(self, app: ASGIApp, *, rule: RequestRule) -> None:
        self.app = app
        self.rule = rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starting and stopping
            await self.app(scope, receive, send)
            return
        refusal = self.rule.refusal(Headers(scope=scope))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        headers = {}
        if isinstance(refusal, UnauthorizedError):
            error = ', error="invalid_token"' if refusal.code == "AUTH_TOKEN_INVALID" else ""
            headers["WWW-Authenticate"] = f'Bearer realm="memory-service"{error}'
        else:  # a token failure is routine; a foreign Host or Origin may be an attack: say so
            logger.warning("refused an MCP HTTP request: %s", refusal.message)
        response = JSONResponse(refusal.to_envelope(), status_code=refusal.http_status, headers=headers)
        await response(scope, receive, send)


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without port or IPv6 brackets, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return (host.rpartition(":")[0] if ":" in host else host).rstrip(".")


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host``; a name other than localhost may resolve anywhere."""
    host = host.strip().strip("[]").lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def is_wildcard(host: str) -> bool:
    """``0.0.0.0`` or ``::``: every address of the machine, under whatever name clients use."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    """Whether ``origin`` is listed, exactly or by a ``scheme://host:*`` pattern (any port)."""
    origin = origin.strip().lower()
    for entry in allowed:
        if entry.endswith(":*"):
            base, _, port = origin.rpartition(":")
            if base == entry[:-2] and port.isdigit():
                return True
        elif origin == entry:
            return True
    return False


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()
