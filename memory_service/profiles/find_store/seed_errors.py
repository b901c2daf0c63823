"""Errors in seed 004's words (FR-053..055): our precise code as one of the seed's error codes,
and the ``{error_code, human_hint, fix, details}`` answer to an error."""

from __future__ import annotations

from typing import Any

from memory_service.core.errors import MemoryServiceError
from memory_service.core.limits import fit_to_budget

# Our input codes by what they say, in seed 004's style (FR-053: ``error_code`` is an enum; FR-054
# names the five it must support). A field absent or blank is MISSING_FIELDS; the seed names no
# code for a field present but wrong, unknown or over its count, so those have their own.
_MISSING = frozenset({"VAL_MISSING_FIELD", "VAL_EMPTY", "VAL_EMPTY_QUERY"})
_UNKNOWN = frozenset({"VAL_UNKNOWN_FIELD"})
_TOO_MANY = frozenset({"VAL_TOO_MANY_ITEMS", "VAL_TOO_MANY_TAGS"})
# Refused because of what is stored, not how the call is written: a conflict.
_STORED_STATE = frozenset({"VAL_IMMUTABLE_CONTENT", "VAL_IMMUTABLE_RECORD"})


def seed_code(code: str) -> str:
    """Our precise code as one of seed 004's error codes (FR-054), or a documented extra.

    A field present but malformed (a wrong type, a value outside its enum or bounds, a bad format
    or rule) is INVALID_FIELDS; a field the tool does not take, UNKNOWN_FIELDS; a list over its
    maximum (more than 100 items), TOO_MANY_ITEMS. UNAUTHORIZED would come from the HTTP
    transport's bearer-token check (AUTH_*), which answers before any tool runs, so a tool sees it
    only if that check ever moves into the call. No rate limiter exists yet: RATE_LIMIT is kept
    for the RATE_* codes one would raise.
    """
    if code == "VAL_INVALID_SCOPE":
        return "INVALID_SCOPE"
    if code in _MISSING:
        return "MISSING_FIELDS"
    if code in _UNKNOWN:
        return "UNKNOWN_FIELDS"
    if code in _TOO_MANY:
        return "TOO_MANY_ITEMS"
    if code in _STORED_STATE or code.startswith("CON_"):
        return "CONFLICT"
    if code.startswith(("VAL_", "SEC_")):
        return "INVALID_FIELDS"
    if code.startswith("AUTH_"):
        return "UNAUTHORIZED"
    if code.startswith("RATE_"):
        return "RATE_LIMIT"
    if code.startswith("NF_"):
        return "NOT_FOUND"
    if code.startswith("SVC_"):
        return "UNAVAILABLE"
    return "INTERNAL"


SEED_ERROR_TOKENS = 2000  # the JSON of one error, estimated (a few KB of English, as seed 001's envelope)


def seed_error(error: MemoryServiceError) -> dict[str, Any]:
    """``{error_code, human_hint, fix, details}`` for an error (FR-053, FR-055): the hint says
    what went wrong and what to do; ``fix`` names the fields and what each expects."""
    envelope = error.to_envelope()["error"]  # clipped, secrets masked
    hint = envelope["message"].rstrip(".")
    if envelope["suggestion"]:
        hint = f"{hint}. {envelope['suggestion']}"
    payload = {
        "error_code": seed_code(error.code),
        "human_hint": hint,
        "fix": _fix(envelope["details"], envelope["suggestion"]),
        "details": {"code": error.code, **envelope["details"]},
    }
    # The hint, fix and details repeat what the envelope clipped (a long unknown field's name up
    # to five times): the longest strings are cut further, so an error stays a few KB.
    fitted, cut = fit_to_budget(payload, SEED_ERROR_TOKENS)
    if cut:  # the seed's four fields only, without the budget's note
        fitted.pop("truncated", None)
        fitted.pop("truncation_note", None)
    return fitted


def _fix(details: dict[str, Any], action: str) -> dict[str, Any]:
    """The structured part of an answer to an error: which fields, what they expect, what to do."""
    fix: dict[str, Any] = {}
    fields = details.get("missing") or [e["field"] for e in details.get("errors", []) if "field" in e]
    if not fields and details.get("field"):
        fields = [details["field"]]
    if fields:
        fix["fields"] = fields
    expected = details.get("expected")
    if isinstance(expected, dict):
        fix["expected"] = expected
    elif details.get("allowed") and details.get("field"):
        fix["expected"] = {details["field"]: "one of " + ", ".join(map(str, details["allowed"]))}
    elif details.get("bounds") and details.get("field"):
        fix["expected"] = {details["field"]: details["bounds"]}
    elif isinstance(expected, str) and details.get("field"):
        fix["expected"] = {details["field"]: expected}
    if details.get("memory_id"):
        fix["memory_id"] = details["memory_id"]
    if action:
        fix["action"] = action
    return fix
