"""TTL policies (seed 004 FR-041..044): when a memory expires, and when a runbook is stale.

``NONE`` never expires. ``BRANCH90d`` expires 90 days after the record was written (branch work:
changes, test runs). ``PR30d`` expires 30 days after its pull request was merged or closed, read
from ``metadata.pr_merged_at`` / ``metadata.pr_closed_at`` (ISO-8601); until one is set it does
not expire. A memory's ``metadata.last_verified_at`` older than 90 days makes it stale
(FR-043's runbooks; any memory that records a verification date).

Expired records are left out of every read, so they vanish on time even before the background
sweep (:mod:`.services.expiry`) soft-deletes them: by a range condition on ``expires_at_ts`` (a
float payload field; records that never expire hold :data:`NEVER`), or, in memory_search, by the
ranker, which drops expired hits rather than add a condition to each engine query.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from memory_service.core.models import MemoryRecord, StaleMark, utcnow


class TtlPolicy(StrEnum):
    PR30D = "PR30d"
    BRANCH90D = "BRANCH90d"
    NONE = "NONE"


EXPIRES_FIELD = "expires_at_ts"
NEVER = 4_102_444_800.0  # 2100-01-01T00:00:00Z: "does not expire", a number range filters can use
VERIFY_DAYS = 90
_DAYS = {TtlPolicy.PR30D: 30, TtlPolicy.BRANCH90D: 90}
PR_DONE_KEYS = ("pr_merged_at", "pr_closed_at", "merged_at", "closed_at")

# Per-type defaults (seed 004's entities): branch work expires, knowledge does not.
DEFAULT_POLICY: dict[str, TtlPolicy] = {
    "change": TtlPolicy.BRANCH90D,
    "test_history": TtlPolicy.BRANCH90D,
    "todo": TtlPolicy.BRANCH90D,
    "pr_context": TtlPolicy.PR30D,
}


def default_policy(memory_type: str) -> TtlPolicy:
    return DEFAULT_POLICY.get(memory_type, TtlPolicy.NONE)


def parse_policy(value: str | None, memory_type: str) -> TtlPolicy:
    """The policy asked for (case-insensitive), or the type's default; ValueError names the choices."""
    if value is None:
        return default_policy(memory_type)
    for policy in TtlPolicy:
        if policy.value.lower() == value.strip().lower():
            return policy
    raise ValueError(value)


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 date or date-time (naive = UTC), or None when it is not one."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def expires_at(policy: str, written_at: datetime, metadata: Mapping[str, Any]) -> datetime | None:
    """When a record under ``policy`` expires; None: never, or not yet known (an open PR)."""
    if policy == TtlPolicy.BRANCH90D:
        return written_at + timedelta(days=_DAYS[TtlPolicy.BRANCH90D])
    if policy == TtlPolicy.PR30D:
        done = [t for t in (parse_time(metadata.get(k)) for k in PR_DONE_KEYS) if t is not None]
        return _plus_days(min(done), _DAYS[TtlPolicy.PR30D]) if done else None
    return None


def _plus_days(moment: datetime, days: int) -> datetime:
    """``moment`` + ``days``, the last representable moment when that is past year 9999 (a PR
    "merged" then never expires in practice, and must not fail the write)."""
    try:
        return moment + timedelta(days=days)
    except OverflowError:
        return datetime.max.replace(tzinfo=UTC)


def expires_ts(moment: datetime | None) -> float:
    return moment.timestamp() if moment is not None else NEVER


def is_expired(moment: datetime | None, now: datetime) -> bool:
    return moment is not None and moment <= now


def verification_age_days(metadata: Mapping[str, Any], now: datetime) -> int | None:
    """Days since ``metadata.last_verified_at`` when that is over 90 (stale), else None."""
    verified = parse_time(metadata.get("last_verified_at"))
    if verified is None:
        return None
    age = (now - verified).days
    return age if age > VERIFY_DAYS else None


def stale_mark(record: MemoryRecord) -> StaleMark | None:
    """The record's stale mark: the indexer's, else one for a verification over 90 days old
    (seed 004 FR-043: runbooks whose last_verified_at is older than 90 days are flagged)."""
    if record.stale is not None:
        return record.stale
    now = utcnow()
    days = verification_age_days(record.metadata, now)
    if days is None:
        return None
    return StaleMark(
        reason=f"last verified {days} days ago (over {VERIFY_DAYS}): re-check it and update "
        "metadata.last_verified_at",
        code_ids=[],
        at=now,
    )
