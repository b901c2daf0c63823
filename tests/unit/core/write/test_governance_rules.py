"""Pure governance rules: scopes, TTL policies, dedupe keys, immutability of decisions and specs."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_service.core import ttl
from memory_service.core.errors import ConflictError, ValidationError
from memory_service.core.models import MemoryRecord, Scope
from memory_service.core.scopes import CallerScope, ScopeInput, read_conditions, resolve_write
from memory_service.core.write import dedupe
from memory_service.core.write.rules import check_governed_update
from memory_service.project import head_branch, parse_remote

HERE = Scope(org="acme", project="shop", branch="feature-a")
NOW = datetime(2026, 11, 23, tzinfo=UTC)


def _scope(**levels: object) -> ScopeInput:
    return ScopeInput.model_validate(levels)


# ------------------------------------------------------------------ scopes


def test_write_scope_is_the_callers_with_given_levels_on_top() -> None:
    assert resolve_write(None, HERE, "design", field="scope") == HERE
    moved = resolve_write(_scope(branch="main", service="billing"), HERE, "design", field="scope")
    assert (moved.branch, moved.service, moved.project, moved.org) == ("main", "billing", "shop", "acme")


def test_preferences_and_explicit_null_branch_are_project_wide() -> None:
    assert resolve_write(None, HERE, "user_preference", field="scope").branch is None
    assert resolve_write(_scope(branch=None), HERE, "design", field="scope").branch is None


@pytest.mark.parametrize(
    ("caller", "given", "field"),
    [
        (HERE, {"tenant": "t1", "org": None}, "scope.tenant"),  # a tenant without an org
        (Scope(project="shop"), {"tenant": "t1"}, "scope.tenant"),
        (Scope(), None, "scope.project"),  # neither git, settings nor the call name a project
        (HERE, {"branch": "*"}, "scope.branch"),  # '*' widens reads only
    ],
)
def test_malformed_or_missing_write_scopes_are_refused(
    caller: Scope, given: dict[str, object] | None, field: str
) -> None:
    with pytest.raises(ValidationError) as err:
        resolve_write(_scope(**given) if given is not None else None, caller, "design", field="scope")
    assert err.value.code == "VAL_INVALID_SCOPE"
    assert err.value.details["field"] == field and err.value.suggestion


def test_reads_default_to_the_callers_branch_and_widen_on_request() -> None:
    assert read_conditions(None, HERE) == {
        "project": ["shop"],
        "branch": ["feature-a", ""],
        "org": ["acme", ""],
    }
    assert read_conditions(_scope(branch="main"), HERE)["branch"] == ["main", ""]
    assert "branch" not in read_conditions(_scope(branch="*"), HERE)
    wide = read_conditions(_scope(project="*"), HERE)
    assert "project" not in wide and "branch" not in wide and wide["org"] == ["acme", ""]
    assert read_conditions(_scope(project="*", branch="main"), HERE)["branch"] == ["main", ""]
    with pytest.raises(ValidationError):
        read_conditions(None, Scope())


def test_caller_scope_follows_the_checkout() -> None:
    branches = iter(["b1", "b2"])
    caller = CallerScope(HERE, lambda: next(branches), ttl=0)
    assert caller.current().branch == "b1"
    assert caller.current().branch == "b2"
    assert CallerScope(HERE, lambda: None).current() == HERE  # detached HEAD: the configured one


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@example.org:acme/shop.git", ("acme", "shop")),
        ("https://example.org/acme/shop", ("acme", "shop")),
        ("ssh://git@example.org:22/group/sub/shop.git", ("sub", "shop")),
        ("/srv/git/shop.git", ("git", "shop")),
        ("https://example.org/", (None, None)),
    ],
)
def test_git_remotes_name_org_and_project(url: str, expected: tuple[str | None, str | None]) -> None:
    assert parse_remote(url) == expected


# ------------------------------------------------------------------ TTL


def test_ttl_defaults_and_expiry_times() -> None:
    assert ttl.parse_policy(None, "change") is ttl.TtlPolicy.BRANCH90D
    assert ttl.parse_policy(None, "design") is ttl.TtlPolicy.NONE
    assert ttl.parse_policy("pr30D", "design") is ttl.TtlPolicy.PR30D
    with pytest.raises(ValueError):
        ttl.parse_policy("forever", "design")
    assert ttl.expires_at("BRANCH90d", NOW, {}) == NOW + timedelta(days=90)
    assert ttl.expires_at("NONE", NOW, {}) is None
    assert ttl.expires_at("PR30d", NOW, {}) is None  # the PR is still open
    merged = ttl.expires_at("PR30d", NOW, {"pr_merged_at": "2026-11-01T00:00:00Z"})
    assert merged == datetime(2026, 12, 1, tzinfo=UTC)
    assert ttl.expires_ts(None) == ttl.NEVER and ttl.is_expired(NOW, NOW)


def test_verification_older_than_90_days_is_stale() -> None:
    assert ttl.verification_age_days({"last_verified_at": "2026-01-01"}, NOW) == 326
    assert ttl.verification_age_days({"last_verified_at": "2026-11-01"}, NOW) is None
    assert ttl.verification_age_days({"last_verified_at": "not a date"}, NOW) is None


# ------------------------------------------------------------------ dedupe keys


def test_dedupe_key_normalises_whitespace_but_not_case() -> None:
    key = dedupe.dedupe_key("design", HERE, {}, "Use  retries\n with backoff ", None)
    assert key == dedupe.dedupe_key("design", HERE, {}, "Use retries with backoff", None)
    assert key != dedupe.dedupe_key("design", HERE, {}, "use retries with backoff", None)
    assert key != dedupe.dedupe_key("session", HERE, {}, "Use retries with backoff", None)
    other_branch = Scope(org="acme", project="shop", branch="main")
    assert key != dedupe.dedupe_key("design", other_branch, {}, "Use retries with backoff", None)
    assert key != dedupe.dedupe_key("design", HERE, {"source": "adr-7.md"}, "Use retries with backoff", None)
    explicit = dedupe.dedupe_key("design", HERE, {}, "anything", "k1")
    assert explicit == dedupe.dedupe_key("session", HERE, {}, "else", "k1") and explicit.startswith("key:")


# ------------------------------------------------------------------ immutability


def _record(memory_type: str, **metadata: object) -> MemoryRecord:
    return MemoryRecord(
        id="00000000-0000-4000-8000-000000000001",
        type=memory_type,
        content="We use Postgres.",
        metadata=dict(metadata),
        content_hash="h",
        created_at=NOW,
        updated_at=NOW,
    )


def test_accepted_decisions_only_move_to_deprecated_or_superseded() -> None:
    adr = _record("design", design_type="ADR", status="accepted", title="DB")
    for content, metadata in (
        ("We use MySQL.", None),
        (None, {"title": "other"}),
        (None, {"status": "proposed"}),
    ):
        with pytest.raises(ConflictError) as err:
            check_governed_update(adr, content, metadata)
        assert err.value.code == "CON_IMMUTABLE_DECISION" and "SUPERSEDES" in err.value.suggestion
    assert check_governed_update(adr, None, {"status": "superseded"}) == {"status": "superseded"}
    assert check_governed_update(adr, None, {"tags": ["db"]}) == {"tags": ["db"]}
    assert check_governed_update(adr, "We use Postgres.", None) is None  # the same content: no change
    proposed = _record("design", status="proposed")
    assert check_governed_update(proposed, "We use MySQL.", None) is None


def test_approved_specs_need_a_version_bump_and_return_to_draft() -> None:
    spec = _record("requirements", status="Approved", spec_version="1.2")
    with pytest.raises(ConflictError) as err:
        check_governed_update(spec, "Changed.", None)
    assert err.value.code == "CON_SPEC_LOCKED" and err.value.details["current_version"] == "1.2"
    with pytest.raises(ConflictError):
        check_governed_update(spec, "Changed.", {"spec_version": "1.1"})
    bumped = check_governed_update(spec, "Changed.", {"spec_version": "1.3"})
    assert bumped == {"spec_version": "1.3", "status": "Draft"}
    assert check_governed_update(spec, None, {"status": "Implemented"}) == {"status": "Implemented"}
    # Tracking, not wording: priority and tags change without a bump (seed 001's example update).
    assert check_governed_update(spec, None, {"priority": "High", "tags": ["x"]}) == {
        "priority": "High",
        "tags": ["x"],
    }
    with pytest.raises(ConflictError):
        check_governed_update(spec, None, {"priority": "High", "title": "Renamed"})


def test_the_checked_out_branch_is_read_from_git_head(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    assert head_branch(tmp_path) == "main"
    git("checkout", "-q", "-b", "feature/x")
    assert head_branch(tmp_path) == "feature/x"  # before the first commit too
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one")
    asked = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True
    )
    assert head_branch(tmp_path) == asked.stdout.strip() == "feature/x"  # what git itself says
    git("checkout", "-q", "--detach")
    assert head_branch(tmp_path) is None
    git("worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt"))
    assert head_branch(tmp_path / "wt") == "wt"  # a linked worktree's .git is a file
    assert head_branch(tmp_path / "nowhere") is None
