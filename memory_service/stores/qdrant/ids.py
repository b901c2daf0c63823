"""Record ids as both Qdrant adapters store them: canonical UUID strings."""

from __future__ import annotations

import uuid

from memory_service.core.errors import ValidationError


def point_id(value: str) -> str:
    """The canonical (lowercase, hyphenated) form of a UUID id, or a VAL_POINT_ID error."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValidationError(
            f"Point id '{value}' is not a UUID",
            code="VAL_POINT_ID",
            details={"provided": str(value)},
            suggestion="Use uuid4 strings as record ids.",
        ) from exc
