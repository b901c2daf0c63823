"""Fact chains keep their integrity under a long random mix of supersedes (issue 8, item 9).

A seeded sequence of valid and invalid memory_supersede calls (plus attempts to edit the chain
keys by hand) runs against the real engines and model. The test keeps its own model of the chains
and predicts every outcome; after every step the stored state must show: exactly one live fact
per chain, no cycle in the fact-to-fact SUPERSEDES graph, edges and metadata that agree with the
model, and memory_search returning the live fact of the chain just touched.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from memory_service.app import Services
from memory_service.core.errors import MemoryServiceError
from memory_service.core.memory.feedback_schemas import MemorySupersedeInput
from memory_service.core.memory.schemas import MemoryAddInput, MemoryUpdateInput
from memory_service.core.ports import PayloadFilter, VectorPoint
from memory_service.core.records import MEMORIES, to_payload
from memory_service.core.search.schemas import MemorySearchInput

STEPS = 300
VOCABULARY = (
    "amber basalt cobalt dune ember fjord glacier harbor indigo jasper kelp lagoon meadow nickel "
    "orchid pebble quartz river saffron tundra umber violet walnut xenon yarrow zephyr anchor "
    "beacon canyon delta estuary falcon granite heron iris juniper kestrel lantern marble nectar "
    "obsidian pylon quill raven sierra thistle upland vortex willow yonder zinc"
)
WORDS = VOCABULARY.split()
FACT_EDGES = (
    "MATCH (a:Memory)-[:SUPERSEDES]->(b:Memory) WHERE a.type = 'fact' AND b.type = 'fact' "
    "RETURN a.id AS src, b.id AS dst"
)


@dataclass
class Chains:
    """The test's own model: which fact supersedes which, and each fact's content."""

    content: dict[str, str] = field(default_factory=dict)
    superseded_by: dict[str, str] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)

    def live(self) -> set[str]:
        return set(self.content) - set(self.superseded_by)

    def head(self, fact: str) -> str:
        while fact in self.superseded_by:
            fact = self.superseded_by[fact]
        return fact

    def edges(self) -> set[tuple[str, str]]:
        return {(new, old) for old, new in self.superseded_by.items()}

    def expect(self, old: str, new: str | None) -> str | None:
        """The error code a supersede must return (None: it succeeds), in the service's order."""
        if old in self.superseded_by:
            return "CON_ALREADY_SUPERSEDED"
        if new == old:
            return "VAL_SUPERSEDE_SELF"
        if new is not None and new in self.superseded_by:
            return "CON_ALREADY_SUPERSEDED"
        return None


def _content(rng: random.Random, n: int) -> str:
    return f"Fact {n}: the " + " ".join(rng.sample(WORDS, 6)) + " setting holds."


def _add_fact(services: Services, chains: Chains, text: str) -> str:
    mid = services.memory.add(MemoryAddInput(type="fact", content=text)).memory_id
    chains.content[mid] = text
    return mid


def _supersede(services: Services, args: dict[str, Any]) -> tuple[str | None, Any]:
    """Run a dry run and then the commit; both must agree. Returns (error code, commit output)."""
    outcomes: list[tuple[str | None, Any]] = []
    for mode in ("dry_run", "commit"):
        try:
            out = services.supersede.supersede(MemorySupersedeInput.model_validate({**args, "mode": mode}))
            outcomes.append((None, out))
        except MemoryServiceError as exc:
            assert exc.suggestion and exc.details.get("field"), exc.to_envelope()
            outcomes.append((exc.code, exc.details))
    (dry_code, dry), (code, out) = outcomes
    assert dry_code == code, (dry_code, dry, code, out)
    if code is not None:
        assert dry == out  # the same refusal, the same details
    return code, out


def _stored_facts(services: Services) -> dict[str, dict[str, Any]]:
    flt = PayloadFilter(equals={"type": "fact", "status": "active"})
    points, offset = services.stores.vectors.scroll(MEMORIES, flt, limit=1000)
    assert offset is None
    return {p.id: p.payload for p in points}


def _check_invariants(services: Services, chains: Chains, touched: str | None) -> None:
    facts = _stored_facts(services)
    assert set(facts) == set(chains.content)
    stored_by = {
        mid: p["metadata"]["superseded_by"] for mid, p in facts.items() if p["metadata"].get("superseded")
    }
    assert stored_by == chains.superseded_by
    rows = services.stores.graph.query(FACT_EDGES, row_limit=10_000)
    edges = {(r["src"], r["dst"]) for r in rows}
    assert edges == chains.edges()
    # No cycle, and exactly one live fact per chain: following "superseded by" from any fact ends,
    # at a live fact, and each chain (connected component) has one such end.
    parent = {old: new for new, old in edges}
    assert len(parent) == len(edges)  # a fact is superseded by one fact only
    live = set(facts) - set(parent)
    component: dict[str, str] = {}
    for fact in facts:
        seen, node = set(), fact
        while node in parent:
            assert node not in seen, f"cycle through {node}"
            seen.add(node)
            node = parent[node]
        assert node in live
        component[fact] = node
    assert set(component.values()) == live  # each chain's members lead to its one live fact
    if touched is not None:
        head = chains.head(touched)
        found = services.search.search(MemorySearchInput(query=chains.content[head], limit=10))
        ids = [r.memory_id for r in found.results]
        assert head in ids, (head, ids)
        assert not set(ids) & set(chains.superseded_by), "a superseded fact was returned"


def _pick(rng: random.Random, chains: Chains, roll: float) -> tuple[str, str | None]:
    """Old and new fact of a supersede (new None: written in the call), valid or not by design."""
    facts, live = sorted(chains.content), sorted(chains.live())
    if roll < 0.30:  # valid: a live fact replaced by a new one
        return rng.choice(live), None
    if roll < 0.42:  # mostly valid: two live facts (two chains merge; sometimes the same fact)
        return rng.choice(live), rng.choice(live)
    if roll < 0.60:  # a loop attempt: an older fact of the live fact's own chain as the new fact
        old = rng.choice(live)
        older = [f for f in facts if f != old and chains.head(f) == old]
        return old, rng.choice(older) if older else rng.choice(facts)
    return rng.choice(facts), rng.choice([None, *facts])  # anything


@pytest.mark.slow
def test_random_supersedes_keep_one_live_fact_per_chain_and_no_cycle(services: Services) -> None:
    rng = random.Random(20261123)
    chains = Chains()
    for _ in range(6):
        _add_fact(services, chains, _content(rng, len(chains.content)))
    counts: dict[str, int] = {}
    for step in range(STEPS):
        facts = sorted(chains.content)
        roll = rng.random()
        touched: str | None = None
        args: dict[str, Any] = {}
        if roll < 0.12:
            touched = _add_fact(services, chains, _content(rng, len(chains.content)))
            counts["add"] = counts.get("add", 0) + 1
        elif roll < 0.82:
            old, new = _pick(rng, chains, roll)
            args = {"old_fact_id": old, "rationale": f"step {step}"}
            if new is None:
                args["new_fact"] = {"content": _content(rng, len(chains.content))}
            else:
                args["new_fact_id"] = new
            if chains.changes and rng.random() < 0.5:
                args["change_id"] = rng.choice(chains.changes)
            else:
                args["change"] = {"content": f"Change {step}: " + " ".join(rng.sample(WORDS, 4))}
            expected = chains.expect(old, new)
            code, out = _supersede(services, args)
            assert code == expected, (step, args, code, out)
            counts[code or "superseded"] = counts.get(code or "superseded", 0) + 1
            if code is None:
                new_id = out.new_fact_id
                if new is None:
                    chains.content[new_id] = args["new_fact"]["content"]
                chains.superseded_by[old] = new_id
                if out.change_id not in chains.changes:
                    chains.changes.append(out.change_id)
                touched = new_id
            else:
                touched = old
        else:  # edit the chain keys by hand: always refused
            fact = rng.choice(facts)
            key = rng.choice(["superseded", "superseded_by", "superseded_by_change"])
            value: Any = None if fact in chains.superseded_by else rng.choice([True, rng.choice(facts)])
            with pytest.raises(MemoryServiceError) as refused:
                services.memory.update(MemoryUpdateInput(memory_id=fact, metadata={key: value}))
            assert refused.value.code == "VAL_IMMUTABLE_FIELD", refused.value.to_envelope()
            counts["update refused"] = counts.get("update refused", 0) + 1
            touched = fact
        _check_invariants(services, chains, touched)
    for head in sorted(chains.live()):  # at the end, every chain's live fact is found, not just one
        _check_invariants(services, chains, head)
    # Every kind of outcome happened, and the chains grew long (the loop guard was exercised).
    assert {"add", "superseded", "CON_ALREADY_SUPERSEDED", "update refused"} <= set(counts), counts
    assert max(sum(1 for f in chains.content if chains.head(f) == h) for h in chains.live()) >= 8


def test_the_graph_walk_refuses_a_loop_even_when_metadata_disagrees(services: Services) -> None:
    """Records written before these checks may have chain keys cleared by hand: the SUPERSEDES
    edges still show the new fact is older than the old one, so the loop is refused."""
    chains = Chains()
    rng = random.Random(7)
    facts = [_add_fact(services, chains, _content(rng, n)) for n in range(8)]
    for older, newer in itertools.pairwise(facts):
        code, _ = _supersede(
            services, {"old_fact_id": older, "new_fact_id": newer, "change": {"content": f"c {newer}"}}
        )
        assert code is None
    first = services.memory.load(facts[0])  # seven hops from the live end: more than one walk
    first.metadata = {k: v for k, v in first.metadata.items() if not k.startswith("superseded")}
    services.stores.vectors.overwrite_payload(MEMORIES, [VectorPoint(id=first.id, payload=to_payload(first))])
    code, details = _supersede(
        services, {"old_fact_id": facts[-1], "new_fact_id": facts[0], "change": {"content": "loop"}}
    )
    assert code == "CON_SUPERSEDE_CYCLE"
    assert details == {"field": "new_fact_id", "provided": facts[0], "old_fact_id": facts[-1]}
    assert "superseded" not in services.memory.load(facts[-1]).metadata
