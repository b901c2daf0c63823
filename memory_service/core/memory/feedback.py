"""memory_feedback: append-only utility votes (seed 002 ``utility_vote``).

A vote is an audit event (``utility_vote``) on the rated memory, written through the RecordWriter
like every other mutation; nothing on the record changes, so votes are never overwritten and the
ranking reads their mean as the ``utility`` component: the mean of the votes cast for the read's
problem context when there are some (ranking.contextual_utility), so the answer reports the
(memory, problem) figures first and the memory's overall ones beside them. The vote still holds
the locks of both memories from validation to append: a vote is never recorded on a memory a racing
delete removed, and racing votes each report the count and mean that include the ones before them.

The vote row is added in the writer's commit transaction (with the audit event and the request
key), so a re-sent call (core/write/request_key.py) whose first attempt recorded its vote finds the key
applied and answers as that attempt did, with no second vote.
"""

from __future__ import annotations

from memory_service.core.audit_event import audit_event
from memory_service.core.errors import ValidationError
from memory_service.core.memory.feedback_schemas import MemoryFeedbackInput, MemoryFeedbackOutput
from memory_service.core.memory.service import MemoryService
from memory_service.core.ports import Vote
from memory_service.core.records import Stores
from memory_service.core.search.signals import UTILITY_VOTE
from memory_service.core.write.kinds import PROBLEM_KIND
from memory_service.core.write.writer import RecordWriter, answered


class FeedbackService:
    def __init__(self, stores: Stores, writer: RecordWriter, memory: MemoryService, actor: str) -> None:
        self._stores = stores
        self._writer = writer
        self._memory = memory
        self._actor = actor

    def vote(self, req: MemoryFeedbackInput) -> MemoryFeedbackOutput:
        """Validate both memories, then append the vote (unless dry run)."""
        with self._memory.writing((req.memory_id, "memory_id"), (req.problem_id, "problem_id")):
            return self._vote(req)

    def _vote(self, req: MemoryFeedbackInput) -> MemoryFeedbackOutput:
        if (done := self._writer.answered_before(MemoryFeedbackOutput)) is not None:
            return done  # a re-send: the vote is in (the counts answered then include it)
        record = self._memory.load(req.memory_id)
        problem = self._memory.load(req.problem_id, field="problem_id")
        if problem.type != PROBLEM_KIND:
            raise ValidationError(
                f"Memory '{problem.id}' is a '{problem.type}' memory, not a problem",
                code="VAL_PROBLEM_LINK_INVALID",
                details={"field": "problem_id", "provided": req.problem_id, "found_type": problem.type},
                suggestion="Vote in the context of a memory of type 'problem' (create one with memory_add "
                "type='problem', or find it with memory_search memory_types=['problem']).",
            )
        previous = [(v.problem_id, v.vote) for v in self._stores.votes.all_of([record.id])]
        votes = [*previous, (problem.id, req.vote)]
        for_problem = [vote for pid, vote in votes if pid == problem.id]
        overall = [vote for _, vote in votes]
        out = MemoryFeedbackOutput(
            status="recorded" if req.mode == "commit" else "dry_run",
            memory_id=record.id,
            problem_id=problem.id,
            vote=req.vote,
            votes_count=len(for_problem),
            mean_vote=_mean(for_problem),
            overall_votes_count=len(overall),
            overall_mean_vote=_mean(overall),
        )
        if req.mode == "commit":
            event = audit_event(
                UTILITY_VOTE,
                "memory",
                record.id,
                self._actor,
                {
                    "problem_id": problem.id,
                    "vote": req.vote,
                    "rationale": req.rationale,
                    "evidence_refs": list(dict.fromkeys(req.evidence_refs or [])),
                },
            )
            vote = Vote(record.id, problem.id, req.vote, self._actor)
            earlier = self._writer.write(
                [], audit=[event], also=lambda: self._stores.votes.add([vote]), answer=out
            )
            return answered(out, earlier)
        return out


def _mean(votes: list[float]) -> float:
    return round(sum(votes) / len(votes), 4)
