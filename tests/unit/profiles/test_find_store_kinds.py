"""Seed 004's knowledge kinds, pure logic: each kind's required fields (FR-008..016), what an item
becomes (content, metadata, type), section chunking (FR-031, A-011) and the error-code mapping."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memory_service.core.errors import ConflictError, ValidationError
from memory_service.profiles import chunking
from memory_service.profiles.find_store import hits, seed_errors
from memory_service.profiles.find_store import items as fs
from memory_service.profiles.find_store.schemas import KINDS, StoreItem, required_fields

COMPLETE: dict[str, dict[str, Any]] = {
    "section": {"title": "Retry policy", "body_md": "# Retry policy\n\nRetries back off exponentially."},
    "runbook": {"service": "ledger", "steps": ["drain the queue", {"run": "ledger-cli reconcile"}]},
    "change": {
        "change_type": "schema",
        "subject_ref": {"table": "payments"},
        "summary": "Add currency column",
    },
    "issue": {"tracker": "jira", "external_id": "PAY-1234", "title": "Ledger drift", "status": "open"},
    "decision": {
        "component": "billing",
        "status": "accepted",
        "title": "Use Postgres for the ledger",
        "rationale": {"why": "ACID transactions"},
        "alternatives": ["MongoDB"],
    },
    "todo": {"scope": "branch", "todo_type": "bugfix", "text": "Handle refunds in the ledger"},
    "release_note": {"version": "1.4.0", "highlights": ["Faster reconciliation"]},
    "ddl": {"entity": "payments", "ddl_sql": "CREATE TABLE payments (id uuid primary key)"},
    "pr_context": {"pr_id": "42", "repo": "shop", "files": ["ledger.py"], "findings": [{"line": 3}]},
}
# The seed's required fields, word for word (a section's body is one of two fields).
SEED_REQUIRED = {
    "section": {"title", "body_md|body_text"},
    "runbook": {"service", "steps"},
    "change": {"change_type", "subject_ref", "summary"},
    "issue": {"tracker", "external_id", "title", "status"},
    "decision": {"component", "status", "title", "rationale", "alternatives"},
    "todo": {"scope", "todo_type", "text"},
    "release_note": {"version", "highlights"},
    "ddl": {"entity", "ddl_sql"},
    "pr_context": {"pr_id", "repo", "files", "findings"},
}


def _item(kind: str, data: dict[str, Any], **extra: Any) -> StoreItem:
    return StoreItem.model_validate({"kind": kind, "scope": {}, "data": data, **extra})


# ------------------------------------------------------------------ required fields


def test_the_nine_kinds_require_exactly_the_seed_fields() -> None:
    assert set(KINDS) == set(SEED_REQUIRED)
    for kind in KINDS:
        assert set(required_fields(kind)) == SEED_REQUIRED[kind], kind


@pytest.mark.parametrize("kind", KINDS)
def test_complete_data_is_accepted_and_extra_fields_are_kept(kind: str) -> None:
    data = {**COMPLETE[kind], "owner_team": "payments"}
    parsed = fs.check_data(kind, data, field="data")
    assert parsed.model_dump()["owner_team"] == "payments"


@pytest.mark.parametrize(
    ("kind", "name"),
    [(kind, name) for kind in KINDS for name in sorted(SEED_REQUIRED[kind]) if name != "body_md|body_text"],
)
def test_each_missing_field_is_named(kind: str, name: str) -> None:
    data = {k: v for k, v in COMPLETE[kind].items() if k != name}
    with pytest.raises(ValidationError) as caught:
        fs.check_data(kind, data, field="items[0].data")
    error = caught.value
    assert error.code == "VAL_MISSING_FIELD"
    assert error.details["missing"] == [f"items[0].data.{name}"]
    assert f"items[0].data.{name}" in error.details["expected"]
    assert seed_errors.seed_error(error)["error_code"] == "MISSING_FIELDS"


@pytest.mark.parametrize("kind", KINDS)
def test_all_missing_fields_are_named_at_once(kind: str) -> None:
    with pytest.raises(ValidationError) as caught:
        fs.check_data(kind, {"note": "nothing the kind needs"}, field="data")
    missing = caught.value.details["missing"]
    assert {m.removeprefix("data.") for m in missing} == SEED_REQUIRED[kind]
    fix = seed_errors.seed_error(caught.value)["fix"]
    assert fix["fields"] == missing
    assert set(fix["expected"]) == set(missing)


def test_a_section_needs_one_of_its_bodies() -> None:
    with pytest.raises(ValidationError) as caught:
        fs.check_data("section", {"title": "t", "body_md": "   "}, field="data")
    assert caught.value.details["missing"] == ["data.body_md|body_text"]
    assert fs.check_data("section", {"title": "t", "body_text": "plain"}, field="data")


@pytest.mark.parametrize(
    ("kind", "name", "bad"),
    [
        ("decision", "status", "approved"),
        ("change", "change_type", "refactor"),
        ("todo", "scope", "team"),
        ("todo", "todo_type", "epic"),
        ("runbook", "steps", "not a list"),
        ("pr_context", "files", {"a.py": 1}),
    ],
)
def test_wrong_values_are_refused_with_the_field(kind: str, name: str, bad: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        fs.check_data(kind, {**COMPLETE[kind], name: bad}, field="data")
    assert caught.value.details["field"] == f"data.{name}"
    assert seed_errors.seed_error(caught.value)["fix"]["fields"] == [f"data.{name}"]


def test_enums_ignore_case_and_numbers_become_strings() -> None:
    parsed = fs.check_data("decision", {**COMPLETE["decision"], "status": "Accepted"}, field="data")
    assert parsed.model_dump()["status"] == "accepted"
    parsed = fs.check_data("pr_context", {**COMPLETE["pr_context"], "pr_id": 42}, field="data")
    assert parsed.model_dump()["pr_id"] == "42"


# ------------------------------------------------------------------ what an item becomes


@pytest.mark.parametrize("kind", KINDS)
def test_an_item_becomes_one_memory_of_its_kind(kind: str) -> None:
    item = _item(kind, {**COMPLETE[kind], "owner_team": "payments"}, tags=["billing"], source="wiki")
    (draft,) = fs.drafts_for(item, fs.check_data(kind, item.data, field="data"))
    assert draft.memory_type == ("design" if kind == "decision" else kind)
    assert fs.kind_of(draft.memory_type) == kind
    assert draft.metadata["tags"] == ["billing"]
    assert draft.metadata["source"] == "wiki"
    assert draft.metadata["owner_team"] == "payments"
    if kind != "section":  # a section's content is its body; the other kinds' is their data
        assert "payments" in draft.content
    for long_text in fs.CONTENT_ONLY.get(kind, ()):
        assert long_text not in draft.metadata
    if kind == "decision":
        assert draft.metadata["design_type"] == "ADR"
        assert draft.metadata["status"] == "accepted"


def test_rendered_text_names_the_fields() -> None:
    text = fs.render_text("decision", COMPLETE["decision"])
    assert text.splitlines()[0] == "ADR: Use Postgres for the ledger"
    assert "Component: billing" in text
    assert "why: ACID transactions" in text
    assert "- MongoDB" in text
    assert fs.title_of("issue", COMPLETE["issue"]) == "PAY-1234: Ledger drift"
    assert fs.title_of("pr_context", COMPLETE["pr_context"]) == "PR 42 (shop)"


def test_tags_may_be_an_object() -> None:
    item = _item("issue", COMPLETE["issue"], tags={"approved": True, "team": "payments", "draft": False})
    (draft,) = fs.drafts_for(item, fs.check_data("issue", item.data, field="data"))
    assert draft.metadata["tags"] == ["approved", "team:payments"]


def test_too_many_or_too_long_tags_are_refused_on_the_item() -> None:
    with pytest.raises(ValueError, match="tags"):
        _item("issue", COMPLETE["issue"], tags=[f"t{i}" for i in range(40)])
    with pytest.raises(ValueError, match="64"):
        _item("issue", COMPLETE["issue"], tags=["x" * 65])


# ------------------------------------------------------------------ chunking


def _doc(sections: int, paragraphs: int = 4) -> str:
    parts = ["# Payments handbook", "How the payments service works."]
    for s in range(sections):
        parts.append(f"## Topic {s}")
        for p in range(paragraphs):
            parts.append(f"Paragraph {p} of topic {s}. " + "The ledger reconciles nightly. " * 8)
    return "\n\n".join(parts)


def _words(text: str) -> list[str]:
    return text.split()


def test_a_short_body_is_one_chunk() -> None:
    body = "# Title\n\nshort body"
    assert chunking.chunk_section(body, markdown=True) == [chunking.Chunk(body)]


def test_a_long_markdown_body_is_split_at_headings_within_one_to_three_kb() -> None:
    body = _doc(sections=8)
    assert chunking.size(body) > 3 * 1024
    chunks = chunking.chunk_section(body, markdown=True)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunking.size(chunk.text) <= chunking.CHUNK_MAX_BYTES
        assert chunking.size(chunk.text) >= chunking.CHUNK_MIN_BYTES
        assert chunk.text.startswith("#")  # every chunk starts at a heading
        assert chunk.path[0] == "Payments handbook"
    assert _words("\n".join(c.text for c in chunks)) == _words(body)  # nothing lost, order kept
    assert any(c.path == ["Payments handbook", "Topic 3"] for c in chunks)


def test_a_long_heading_section_falls_back_to_paragraphs() -> None:
    body = _doc(sections=1, paragraphs=30)
    chunks = chunking.chunk_section(body, markdown=True)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunking.CHUNK_MIN_BYTES <= chunking.size(chunk.text) <= chunking.CHUNK_MAX_BYTES
        assert chunk.text.split(" ")[0] in ("#", "##", "Paragraph")  # cut at paragraph starts
    assert _words("\n".join(c.text for c in chunks)) == _words(body)


def test_plain_text_is_split_by_size_only() -> None:
    body = _doc(sections=6)
    chunks = chunking.chunk_section(body, markdown=False)
    assert len(chunks) > 1
    assert all(c.path == [] for c in chunks)
    assert all(chunking.size(c.text) <= chunking.CHUNK_MAX_BYTES for c in chunks)
    assert _words("\n".join(c.text for c in chunks)) == _words(body)


def test_one_huge_line_is_cut_between_characters_within_three_kb() -> None:
    body = "é" * 5000  # 10,000 bytes of two-byte characters, no break anywhere
    chunks = chunking.chunk_section(body, markdown=False)
    assert "".join(c.text for c in chunks) == body
    assert all(chunking.size(c.text) <= chunking.CHUNK_MAX_BYTES for c in chunks)
    assert all(chunking.size(c.text) >= chunking.CHUNK_MIN_BYTES for c in chunks)


def test_hashes_in_fenced_code_are_not_headings() -> None:
    code = "```bash\n# not a heading\necho hi\n```"
    body = "# Doc\n\n" + ("Intro text. " * 200) + "\n\n" + code + "\n\n" + ("More text. " * 200)
    blocks = chunking.split_headings(body)
    assert [b.path for b in blocks] == [["Doc"]]


def test_small_heading_sections_are_merged_under_their_shared_heading() -> None:
    parts = ["# Guide"] + [f"## Step {i}\n\n" + "Do the thing carefully. " * 20 for i in range(12)]
    body = "\n\n".join(parts)
    chunks = chunking.chunk_section(body, markdown=True)
    assert all(chunking.size(c.text) >= chunking.CHUNK_MIN_BYTES for c in chunks)
    assert all(chunking.size(c.text) <= chunking.CHUNK_MAX_BYTES for c in chunks)
    assert any(c.path == ["Guide"] for c in chunks)  # two steps in one chunk: their shared heading


def test_a_long_section_item_becomes_chunk_memories_with_keys() -> None:
    item = _item("section", {"title": "Payments handbook", "body_md": _doc(8)}, idempotency_key="handbook")
    drafts = fs.drafts_for(item, fs.check_data("section", item.data, field="data"))
    assert len(drafts) > 2
    keys = [d.idempotency_key for d in drafts]
    assert keys[0] == "handbook"
    assert keys[1:] == [f"handbook#{i}" for i in range(1, len(drafts))]
    section_keys = {d.metadata["section_key"] for d in drafts}
    assert len(section_keys) == 1
    for i, draft in enumerate(drafts):
        assert draft.memory_type == "section"
        assert draft.metadata["chunk_index"] == i
        assert draft.metadata["chunk_count"] == len(drafts)
        assert draft.metadata["title"] == "Payments handbook"
        assert draft.metadata["heading_path"]
        assert "body_md" not in draft.metadata
    assert fs.chunk_key("k" * 200, 3) != "k" * 200 + "#3"
    assert len(fs.chunk_key("k" * 200, 3) or "") <= 200


# ------------------------------------------------------------------ reading back, errors


def test_snippets_are_short_and_show_the_query_term() -> None:
    content = "Intro. " * 100 + "The reconciliation job runs nightly. " + "Tail. " * 100
    text = hits.snippet(content, "when does reconciliation run")
    assert len(text) <= hits.SNIPPET_CHARS
    assert "reconciliation" in text
    assert hits.snippet("short text", "x") == "short text"
    assert hits.snippet("word " * 200, "absent").startswith("word")


def test_chunk_titles_show_their_headings() -> None:
    title = hits.hit_title("Handbook", {"heading_path": ["Handbook", "Retries", "Backoff"]})
    assert title == "Handbook > Retries > Backoff"
    assert hits.hit_title("Issue", {}) == "Issue"


def test_citations_come_from_sources_prs_and_trackers() -> None:
    cited = hits.citations(
        {
            "source": {"url": "https://wiki/x", "tool": "wiki"},
            "pr_id": "42",
            "repo": "shop",
            "commit": "abc123",
        }
    )
    assert cited == ["https://wiki/x", "shop#42", "commit abc123"]
    assert hits.citations({"tracker": "jira", "external_id": "PAY-1"}) == ["jira:PAY-1"]
    assert hits.citations({}) == []


@pytest.mark.parametrize(
    ("code", "seed"),
    [
        ("VAL_INVALID_SCOPE", "INVALID_SCOPE"),
        ("VAL_MISSING_FIELD", "MISSING_FIELDS"),
        ("VAL_EMPTY", "MISSING_FIELDS"),
        ("VAL_OUT_OF_RANGE", "INVALID_FIELDS"),
        ("VAL_INVALID_ENUM", "INVALID_FIELDS"),
        ("VAL_INVALID_FIELD_TYPE", "INVALID_FIELDS"),
        ("VAL_INVALID_VALUE", "INVALID_FIELDS"),
        ("SEC_UNSAFE_INPUT", "INVALID_FIELDS"),
        ("VAL_UNKNOWN_FIELD", "UNKNOWN_FIELDS"),
        ("VAL_TOO_MANY_ITEMS", "TOO_MANY_ITEMS"),
        ("VAL_IMMUTABLE_CONTENT", "CONFLICT"),
        ("VAL_IMMUTABLE_RECORD", "CONFLICT"),
        ("CON_IMMUTABLE_DECISION", "CONFLICT"),
        ("CON_SPEC_LOCKED", "CONFLICT"),
        ("AUTH_TOKEN_INVALID", "UNAUTHORIZED"),
        ("RATE_LIMITED", "RATE_LIMIT"),
        ("NF_MEMORY", "NOT_FOUND"),
        ("SVC_UNAVAILABLE", "UNAVAILABLE"),
        ("INT_UNEXPECTED", "INTERNAL"),
    ],
)
def test_error_codes_map_to_the_seed_codes(code: str, seed: str) -> None:
    assert seed_errors.seed_code(code) == seed


def test_an_error_answer_has_a_hint_and_a_fix() -> None:
    error = ConflictError(
        "Decision 'x' is accepted: its content cannot be changed",
        code="CON_IMMUTABLE_DECISION",
        details={"field": "content", "memory_id": "x"},
        suggestion="Record a new decision instead.",
    )
    answer = seed_errors.seed_error(error)
    assert set(answer) == {"error_code", "human_hint", "fix", "details"}
    assert answer["error_code"] == "CONFLICT"
    assert answer["human_hint"].endswith("Record a new decision instead.")
    assert answer["fix"] == {
        "fields": ["content"],
        "memory_id": "x",
        "action": "Record a new decision instead.",
    }
    assert answer["details"]["code"] == "CON_IMMUTABLE_DECISION"
    assert not re.search(r"\.\.", answer["human_hint"])
