"""One error hierarchy for the whole service.

Every error carries what seed 001 (§3.5, §6) asks of it: a specific ``code`` (``VAL_*``, ``NF_*``,
``CON_*``, ``SVC_*``, ``INT_*``; ``AUTH_*`` on the HTTP transport), the broad ``category`` from the
standard error-code table, a human ``message`` (what went wrong), ``details`` (why: field, provided
value, allowed values...) and a ``suggestion`` (how to fix it). The MCP layer turns any of these
into the error envelope.
"""

from __future__ import annotations

from typing import Any, ClassVar

from memory_service.core.limits import clip_text, clip_value
from memory_service.core.redaction.sanitize import scrub_value

# What an envelope may hold of its own text: messages and suggestions are ours, but they may
# quote input, so they are bounded too (details are clipped value by value).
_TEXT_CHARS = 1000


class MemoryServiceError(Exception):
    """Base class: an error the caller can read and act on."""

    category: ClassVar[str] = "INTERNAL_ERROR"
    http_status: ClassVar[int] = 500
    default_code: ClassVar[str] = "INT_ERROR"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        suggestion: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details or {}
        self.suggestion = suggestion

    def to_envelope(self) -> dict[str, Any]:
        """The seed-001 error envelope (§6.2), with the broad category alongside the code.

        Bounded whatever the input: an error repeats at most a prefix and the length of any value.
        """
        error = {
            "code": self.code,
            "category": self.category,
            "message": clip_text(self.message, _TEXT_CHARS),
            "details": clip_value(self.details),
            "suggestion": clip_text(self.suggestion, _TEXT_CHARS),
        }
        # An error may quote the input; a secret in it is masked like everywhere else.
        return {"status": "error", "error": scrub_value(error)[0]}


class ValidationError(MemoryServiceError):
    """The input does not satisfy the tool's schema or a domain rule."""

    category = "VALIDATION_ERROR"
    http_status = 400
    default_code = "VAL_INVALID"


class NotFoundError(MemoryServiceError):
    """A referenced entity does not exist (or is deleted)."""

    category = "NOT_FOUND"
    http_status = 404
    default_code = "NF_NOT_FOUND"


class ConflictError(MemoryServiceError):
    """The request conflicts with existing state."""

    category = "CONFLICT"
    http_status = 409
    default_code = "CON_CONFLICT"


class SecurityError(ValidationError):
    """Input shaped like an attack (seed 003's security_error): prototype-pollution keys."""

    category = "SECURITY_ERROR"
    http_status = 400
    default_code = "SEC_UNSAFE_INPUT"


class UnauthorizedError(MemoryServiceError):
    """An HTTP request without the bearer token the server requires (MCP over streamable HTTP)."""

    category = "UNAUTHORIZED"
    http_status = 401
    default_code = "AUTH_TOKEN_INVALID"


class ForbiddenError(MemoryServiceError):
    """An HTTP request refused whatever its credentials: a browser Origin or a Host not served."""

    category = "FORBIDDEN"
    http_status = 403
    default_code = "AUTH_FORBIDDEN"


class ServiceUnavailableError(MemoryServiceError):
    """A dependency (store, model) is down or not loaded; retrying later may work."""

    category = "SERVICE_UNAVAILABLE"
    http_status = 503
    default_code = "SVC_UNAVAILABLE"


class InternalError(MemoryServiceError):
    """A bug or unexpected failure; the server log has the traceback."""

    category = "INTERNAL_ERROR"
    http_status = 500
    default_code = "INT_UNEXPECTED"


def memory_not_found(memory_id: str, *, field: str = "memory_id") -> NotFoundError:
    """The standard error for an unknown or deleted memory id."""
    return NotFoundError(
        f"Memory with ID '{memory_id}' not found",
        code="NF_MEMORY",
        details={"field": field, "provided": memory_id},
        suggestion="Verify the memory ID exists using memory_search (deleted memories are not returned).",
    )
