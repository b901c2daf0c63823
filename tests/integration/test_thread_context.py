"""Thread context on the real engines and model: a session's answer turn is found by its question."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_service.app import Services, open_services
from memory_service.core.memory.schemas import MemoryAddInput, MemoryBulkAddRequest, MemoryUpdateInput
from memory_service.core.records import MEMORIES
from memory_service.core.search.explain_schemas import MemoryExplainInput
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.core.write.threads import ThreadContext
from memory_service.settings import EmbeddingSettings, MemorySettings, Settings
from tests.conftest import require_model

QUERY = "how does Melanie unwind after a hard week"
CONVERSATION = [
    "Caroline: The clinic was exhausting again. What do you do to unwind after a hard week?",
    "Melanie: Pottery on Saturday mornings, and long walks with Rex.",
    "Caroline: That sounds lovely, I should try it.",
]
# Other turns by Melanie, in other sessions, with nothing to do with unwinding.
DISTRACTORS = [
    "Melanie: The dentist moved my appointment to Thursday.",
    "Melanie: My car broke down on the highway again.",
    "Melanie: I finally finished the tax forms for this year.",
    "Melanie: The kids started at a new school in September.",
    "Melanie: We are repainting the kitchen a pale green.",
    "Melanie: My sister is visiting from Boston next month.",
]


def _open(root: Path, turns: int) -> Services:
    settings = Settings(
        data_dir=root / "data",
        project_root=root,
        project="p",
        embedding=EmbeddingSettings(model_path=require_model()),
        memory=MemorySettings(context_turns=turns),
    )
    return open_services(settings, housekeeping=False)


def _session(content: str, session_id: str) -> dict[str, Any]:
    return {"type": "session", "content": content, "metadata": {"session_id": session_id}}


def _fill(services: Services) -> list[str]:
    items = [_session(c, f"other-{i}") for i, c in enumerate(DISTRACTORS)]
    items += [_session(c, "evening-chat") for c in CONVERSATION]
    out = services.memory.bulk_add(MemoryBulkAddRequest.model_validate({"memories": items}))
    assert not out.errors
    return out.memory_ids[len(DISTRACTORS) :]


def _rank(services: Services, memory_id: str, query: str = QUERY) -> int | None:
    found = services.search.search(MemorySearchInput(query=query, limit=10, semantic_hops=0))
    ids = [r.memory_id for r in found.results]
    return ids.index(memory_id) + 1 if memory_id in ids else None


@pytest.fixture(scope="module")
def with_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Services, list[str]]]:
    services = _open(tmp_path_factory.mktemp("ctx"), 2)
    try:
        yield services, _fill(services)
    finally:
        services.close()


def test_the_answer_turn_is_found_by_the_question_before_it(
    with_context: tuple[Services, list[str]], tmp_path: Path
) -> None:
    services, (_, answer, _) = with_context
    in_context = _rank(services, answer)
    assert in_context is not None and in_context <= 3, in_context
    # The same memories without thread context: the answer shares only the name with the query.
    plain = _open(tmp_path, 0)
    try:
        plain_ids = _fill(plain)
        without = _rank(plain, plain_ids[1])
    finally:
        plain.close()
    assert without is None or without > in_context, (without, in_context)


def test_context_is_rebuilt_when_a_turn_is_edited(with_context: tuple[Services, list[str]]) -> None:
    services, (_, answer, _) = with_context
    services.memory.update(
        MemoryUpdateInput(memory_id=answer, content="Melanie: Mostly knitting, and a bath.")
    )
    rank = _rank(services, answer)
    assert rank is not None and rank <= 2, rank  # re-embedded with the question before it


def test_a_later_add_reads_the_turns_already_stored(with_context: tuple[Services, list[str]]) -> None:
    services, (_, answer, _) = with_context
    answer_now = services.memory.load(answer).content  # as an earlier test may have edited it
    added = services.memory.add(
        MemoryAddInput.model_validate(
            _session("Melanie: Oh, and baking bread on Sunday evenings too.", "evening-chat")
        )
    )
    threads = ThreadContext(services.stores.vectors, turns=2, max_chars=400)
    contexts = threads.texts([services.memory.load(added.memory_id)])
    assert contexts[0] is not None
    assert contexts[0].splitlines() == [
        answer_now,
        CONVERSATION[2],
        "Melanie: Oh, and baking bread on Sunday evenings too.",
    ]


def test_memories_outside_threads_get_no_context_vectors(with_context: tuple[Services, list[str]]) -> None:
    services, _ = with_context
    out = services.memory.add(
        MemoryAddInput(type="design", content="Unwinding the retry stack on shutdown drains queues.")
    )
    rank = _rank(services, out.memory_id, "unwinding the retry stack")
    assert rank == 1  # found by its own vectors in both views
    hits = services.stores.vectors.search_dense(
        MEMORIES, services.stores.embedder.embed_query("unwinding the retry stack"), 50, context=True
    )
    assert out.memory_id not in {h.id for h in hits}


def test_a_threads_first_memory_has_no_pair_and_is_found_by_its_own_vectors(
    with_context: tuple[Services, list[str]],
) -> None:
    """A thread's first memory gets no context pair (its context would be itself): search reads
    it by its own vectors in the context view, as it reads memories outside threads."""
    services, (question, answer, reply) = with_context
    vectors = services.stores.vectors
    others = [
        h.id
        for h in vectors.search_sparse(MEMORIES, services.stores.sparse.encode_query("Melanie"), 50)
        if str(services.memory.load(h.id).metadata.get("session_id")).startswith("other-")
    ]
    assert len(others) == len(DISTRACTORS)  # each the first (and only) memory of its session
    assert vectors.context_ids(MEMORIES, [question, *others, answer, reply]) == {answer, reply}
    hits = vectors.search_dense(
        MEMORIES, services.stores.embedder.embed_query(CONVERSATION[0]), 50, context=True
    )
    assert question not in {h.id for h in hits}
    assert _rank(services, question, "the clinic was exhausting, what do you do to unwind") == 1
    assert _rank(services, others[0], services.memory.load(others[0]).content) == 1


def test_moving_a_memory_to_another_session_rebuilds_its_context(
    with_context: tuple[Services, list[str]],
) -> None:
    services, _ = with_context
    first = services.memory.add(
        MemoryAddInput.model_validate(_session("Caroline: Which trail did you hike near Denver?", "trail"))
    )
    moved = services.memory.add(
        MemoryAddInput.model_validate(_session("Melanie: The one by the reservoir, twice.", "elsewhere"))
    )
    query = "trail near Denver"
    hits = services.stores.vectors.search_sparse(
        MEMORIES, services.stores.sparse.encode_query(query), 50, context=True
    )
    assert moved.memory_id not in {h.id for h in hits}  # its context is only itself so far
    services.memory.update(MemoryUpdateInput(memory_id=moved.memory_id, metadata={"session_id": "trail"}))
    hits = services.stores.vectors.search_sparse(
        MEMORIES, services.stores.sparse.encode_query(query), 50, context=True
    )
    assert moved.memory_id in {h.id for h in hits}
    assert first.memory_id not in {h.id for h in hits}  # the thread's first: no pair, read as itself


def test_explain_shows_thread_support_only_for_memories_in_threads(
    with_context: tuple[Services, list[str]],
) -> None:
    services, (question, answer, _) = with_context
    lone = services.memory.add(
        MemoryAddInput(type="design", content="Melanie's unwind script drains the worker pool at shutdown.")
    )
    out = services.explain.explain(MemoryExplainInput(query=QUERY, ids=[answer, lone.memory_id], limit=10))
    by_id = {str(item.id): item for item in out.items}
    assert by_id[lone.memory_id].score.components["thread"] is None  # not in a thread
    support = by_id[answer].score.components["thread"]
    # The answer's thread holds the question, which matches the query: it lends support.
    assert support is not None and support > 0
    ranked = services.search.search(MemorySearchInput(query=QUERY, limit=10))
    scores = {r.memory_id: r.relevance_score for r in ranked.results}
    assert scores[answer] == pytest.approx(by_id[answer].score.total, abs=1e-4)  # same numbers
    assert question in scores
