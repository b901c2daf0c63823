"""Turn pydantic validation failures into seed-001 errors with a code, details and a suggestion."""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic

from memory_service.core.errors import ValidationError
from memory_service.core.limits import clip_text, clip_value

M = TypeVar("M", bound=pydantic.BaseModel)
MAX_LISTED = 10  # problems listed in details.errors


def validate_input(model: type[M], arguments: Any, *, field_prefix: str = "") -> M:
    """Validate ``arguments`` against ``model``; raise :class:`ValidationError` on the first problem.

    Every problem found is listed in ``details.errors`` so a caller can fix them all at once.
    """
    if not isinstance(arguments, dict):
        raise ValidationError(
            "Arguments must be a JSON object",
            code="VAL_INVALID_ARGUMENTS",
            details={"provided_type": type(arguments).__name__},
            suggestion="Pass the tool arguments as an object of named fields.",
        )
    try:
        return model.model_validate(arguments)
    except pydantic.ValidationError as exc:
        raise translate(exc, model, field_prefix=field_prefix) from None


def translate(
    exc: pydantic.ValidationError, model: type[pydantic.BaseModel], *, field_prefix: str = ""
) -> ValidationError:
    """The first error becomes the message; all of them go to ``details.errors``."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = _field_name(first["loc"], field_prefix)
    code, message, suggestion, extra = _describe(first, field, model)
    details: dict[str, Any] = {"field": field, **extra}
    if "input" in first and first["type"] != "missing":
        details["provided"] = _short(first["input"])
    if len(errors) > 1:
        details["errors"] = [
            {"field": _field_name(e["loc"], field_prefix), "problem": e["msg"]} for e in errors[:MAX_LISTED]
        ]
        if len(errors) > MAX_LISTED:  # an envelope stays small: the first ones, and how many in all
            details["errors_total"] = len(errors)
    return ValidationError(message, code=code, details=details, suggestion=suggestion)


def _field_name(loc: tuple[int | str, ...], prefix: str) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    name = "".join(parts) or "arguments"
    return f"{prefix}{name}" if prefix else name


def _short(value: Any) -> Any:
    """What an error repeats of a provided value: short values whole, long ones summarised."""
    if isinstance(value, dict | list) and len(value) > 10:
        return f"<{type(value).__name__} of {len(value)} entries>"
    return clip_value(value)


def _describe(err: Any, field: str, model: type[pydantic.BaseModel]) -> tuple[str, str, str, dict[str, Any]]:
    """(code, message, suggestion, extra details) for one pydantic error."""
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    leaf = field.rsplit(".", 1)[-1]
    if kind == "missing":
        return (
            "VAL_MISSING_FIELD",
            f"Field '{field}' is required but was not provided",
            f"Include '{leaf}'{_hint(leaf)}.",
            {},
        )
    if kind == "extra_forbidden":
        allowed = _allowed_fields(model, err["loc"])
        return (
            "VAL_UNKNOWN_FIELD",
            f"Unknown field '{field}'",
            f"Remove '{leaf}' or use one of the accepted fields: {', '.join(allowed)}.",
            {"allowed": allowed},
        )
    if kind in ("enum", "literal_error"):
        allowed = [v.strip("'") for v in str(ctx.get("expected", "")).replace(" or ", ", ").split(", ")]
        noun = "memory type" if leaf == "type" else f"value for '{field}'"
        return (
            "VAL_INVALID_TYPE" if leaf == "type" else "VAL_INVALID_ENUM",
            f"Invalid {noun} '{clip_text(str(err.get('input')), 80)}'. Must be one of: {', '.join(allowed)}",
            f"Use one of the valid values listed in the allowed values for '{field}'.",
            {"allowed": allowed},
        )
    if kind in ("string_too_short", "too_short", "string_blank"):
        return (
            "VAL_EMPTY",
            f"Field '{field}' must not be empty" + (" or only whitespace" if kind == "string_blank" else ""),
            f"Give '{leaf}' a non-empty value{_hint(leaf)}.",
            {"min_length": ctx.get("min_length")},
        )
    if kind == "string_too_long":
        limit = ctx.get("max_length")
        size = len(err["input"]) if isinstance(err.get("input"), str) else None
        return (
            "VAL_TOO_LONG",
            f"Field '{field}' is {size} characters long; the limit is {limit}",
            f"Shorten '{leaf}' to at most {limit} characters, or split it into several memories "
            "(memory_bulk_add takes up to 100 at once).",
            {"max_length": limit, "length": size},
        )
    if kind == "too_long":
        limit = ctx.get("max_length")
        return (
            "VAL_TOO_MANY_ITEMS",
            f"Field '{field}' has {ctx.get('actual_length')} items; the limit is {limit}",
            f"Send at most {limit} items per call; split the rest into further calls.",
            {"max_items": limit, "count": ctx.get("actual_length")},
        )
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = {k: v for k, v in ctx.items() if k in ("ge", "le", "gt", "lt")}
        return (
            "VAL_OUT_OF_RANGE",
            f"Field '{field}' is out of range: {err['msg'].lower()}",
            f"Give '{leaf}' a value {err['msg'].lower().replace('input should be ', '')}.",
            {"bounds": bound},
        )
    if kind == "value_error":
        text = str(ctx.get("error", err["msg"]))
        return ("VAL_INVALID_VALUE", f"Invalid arguments: {text}", _value_error_hint(text), {})
    expected = kind.split("_")[0]
    return (
        "VAL_INVALID_FIELD_TYPE",
        f"Field '{field}' has the wrong type: {err['msg']}",
        f"Give '{leaf}' a value of type {expected} as the tool's input schema describes.",
        {"expected": expected},
    )


_FIELD_HINTS = {
    "content": " with the memory text",
    "type": " (one of the memory types, e.g. 'design')",
    "query": " with the text to search for",
    "memory_id": " (the UUID returned by memory_add)",
    "memories": " (a list of {type, content, metadata} objects)",
}


def _hint(leaf: str) -> str:
    return _FIELD_HINTS.get(leaf, "")


def _value_error_hint(text: str) -> str:
    if "nothing to update" in text:
        return "Pass the new 'content', a 'metadata' object, or both."
    if "time_range" in text:
        return "Make time_range.start earlier than (or equal to) time_range.end."
    return "Fix the value as the message describes and call the tool again."


def _allowed_fields(model: type[pydantic.BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            break
        current = _model_of(field.annotation)
    return sorted(getattr(current, "model_fields", {}) or [])


def _model_of(annotation: Any) -> Any:
    from typing import get_args

    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
