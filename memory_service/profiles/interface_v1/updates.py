"""Seed 002's three ``update`` operations (archive_state, utility_vote, fact_update_link), each over
one shared service, answered with the effects it had (or, in a dry run, would have)."""

from __future__ import annotations

from typing import Any

from memory_service.core.memory.feedback_schemas import MemoryFeedbackInput, MemorySupersedeInput
from memory_service.profiles.interface_v1.rules import check_link_evidence, in_repository
from memory_service.profiles.interface_v1.schemas import (
    ArchiveState,
    FactUpdateLink,
    UpdateOutput,
    UpdateRequest,
    UtilityVote,
)
from memory_service.profiles.services import ProfileServices


def archive_state(services: ProfileServices, req: UpdateRequest, body: ArchiveState) -> UpdateOutput:
    in_repository(services, req.repo_id, {"memory_id": req.memory_id})
    out = services.archive.set_archived(
        req.memory_id, body.archived, rationale=body.rationale, dry_run=req.mode == "dry_run"
    )
    verb = "archived" if body.archived else "restored"
    if out.status == "unchanged":
        effects = [
            f"memory {out.memory_id} is already {'archived' if out.archived else 'active'}: nothing to do"
        ]
    elif out.status == "dry_run":
        effects = [f"memory {out.memory_id} would be {verb}" + _archive_note(body.archived, "would be")]
    else:
        effects = [f"memory {out.memory_id} was {verb}" + _archive_note(body.archived, "is")]
    return _update_output(req, "archive_state", _status(out.status), effects, out.model_dump(mode="json"))


def _archive_note(archived: bool, verb: str) -> str:
    return (
        f": it {verb} hidden from memory.read until restored (archived: false)"
        if archived
        else f": it {verb} found by memory.read again"
    )


def utility_vote(services: ProfileServices, req: UpdateRequest, body: UtilityVote) -> UpdateOutput:
    in_repository(services, req.repo_id, {"memory_id": req.memory_id, "update.problem_id": body.problem_id})
    out = services.feedback.vote(
        MemoryFeedbackInput(
            memory_id=req.memory_id,
            problem_id=body.problem_id,
            vote=body.vote,
            rationale=body.rationale,
            evidence_refs=body.evidence_refs,
            mode=req.mode,
        )
    )
    verb = "would be" if req.mode == "dry_run" else "was"
    effects = [
        f"utility vote {body.vote:g} on memory {out.memory_id} for problem {out.problem_id} {verb} "
        "appended (votes are never overwritten)"
    ]
    return _update_output(req, "utility_vote", _status(out.status), effects, out.model_dump(mode="json"))


def fact_update_link(services: ProfileServices, req: UpdateRequest, body: FactUpdateLink) -> UpdateOutput:
    in_repository(
        services,
        req.repo_id,
        {
            "memory_id": req.memory_id,
            "update.old_fact_id": body.old_fact_id,
            "update.new_fact_id": body.new_fact_id,
        },
    )
    check_link_evidence(services, req.memory_id, body)
    out = services.supersede.supersede(
        MemorySupersedeInput(
            old_fact_id=body.old_fact_id,
            new_fact_id=body.new_fact_id,
            change_id=req.memory_id,
            rationale=body.rationale,
            evidence_refs=body.evidence_refs,
            mode=req.mode,
        )
    )
    verb = "would be" if req.mode == "dry_run" else "is"
    effects = [
        f"fact {out.old_fact_id} {verb} linked to its replacement {out.new_fact_id} through change "
        f"{out.change_id} (fact_updates chain: {' -> '.join(out.chain)})",
        f"fact {out.old_fact_id} {verb} left out of memory.read results, except as a chain neighbour "
        "(expand.include_fact_update_links)",
    ]
    return _update_output(req, "fact_update_link", _status(out.status), effects, out.model_dump(mode="json"))


def _status(service_status: str) -> str:
    """The services' statuses (recorded, committed, archived, restored...) in three words."""
    if service_status in ("dry_run", "unchanged"):
        return service_status
    return "committed"


def _update_output(
    req: UpdateRequest, kind: str, status: str, effects: list[str], result: dict[str, Any]
) -> UpdateOutput:
    return UpdateOutput(
        repo_id=req.repo_id,
        memory_id=str(result.get("memory_id") or req.memory_id),
        mode=req.mode,
        type=kind,
        status=status,
        effects=effects,
        result=result,
    )
