"""export_memory / import_memory on real stores: a lossless round trip, conflict modes, filters,
and bad files refused whole (nothing half-imported)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory_service.app import Services
from memory_service.core.code.stale import StaleMarker
from memory_service.core.errors import ConflictError, MemoryServiceError, ValidationError
from memory_service.core.memory.feedback_schemas import MemoryFeedbackInput, MemorySupersedeInput
from memory_service.core.memory.schemas import MemoryAddInput, MemoryBulkAddRequest, MemoryUpdateInput
from memory_service.core.portability import importer as portability_import
from memory_service.core.portability.schemas import ExportMemoryInput, ImportMemoryInput
from memory_service.core.ports import GraphEdge, PayloadFilter
from memory_service.core.records import MEMORIES
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import require_model
from tests.integration.conftest import opened_services


@contextmanager
def other_services(tmp_path: Path, name: str) -> Iterator[Services]:
    """A second, empty data directory with the model loaded."""
    settings = Settings(
        data_dir=tmp_path / name,
        project_root=tmp_path,
        project="integration",
        embedding=EmbeddingSettings(model_path=require_model()),
    )
    with opened_services(settings) as opened:
        yield opened


def add(services: Services, kind: str, content: str, **extra: Any) -> str:
    return services.memory.add(MemoryAddInput(type=kind, content=content, **extra)).memory_id


def export(services: Services, path: Path, **kwargs: Any) -> Path:
    out = services.portability.export(ExportMemoryInput(output_path=str(path), **kwargs), trusted_path=True)
    assert Path(out.file_path) == path and out.file_size_bytes == path.stat().st_size
    return path


def import_(services: Services, path: Path, **kwargs: Any) -> Any:
    return services.portability.import_file(
        ImportMemoryInput(file_path=str(path), **kwargs), trusted_path=True
    )


def body(path: Path) -> list[str]:
    """The memory lines (header and trailer carry the export time and a checksum over it)."""
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "memory-service-export" and json.loads(lines[-1])["end"]
    return lines[1:-1]


def count(services: Services) -> int:
    return services.stores.vectors.count(MEMORIES, PayloadFilter())


def build_corpus(services: Services) -> dict[str, str]:
    """Everything a record can carry: versions, a supersede chain, votes, a thread, a soft delete,
    an edge from code, a stale mark."""
    ids = {"design": add(services, "design", "Use WAL mode for SQLite.", metadata={"tags": ["db"]})}
    ids["req"] = add(
        services,
        "requirements",
        "REQ-DB-001 writes survive a crash.",
        relationships=[{"type": "RELATES_TO", "target_id": ids["design"]}],
    )
    services.memory.update(MemoryUpdateInput(memory_id=ids["design"], content="Use WAL mode, always."))
    ids["fact"] = add(services, "fact", "The cache lives in Redis.")
    chain = services.supersede.supersede(
        MemorySupersedeInput(
            old_fact_id=ids["fact"],
            new_fact={"content": "The cache lives in SQLite."},
            change={"content": "PR-7 dropped Redis."},
        )
    )
    ids["new_fact"], ids["change"] = str(chain.new_fact_id), str(chain.change_id)
    ids["problem"] = add(services, "problem", "Writes were lost on power cuts.")
    for vote in (1.0, -0.5):
        services.feedback.vote(
            MemoryFeedbackInput(memory_id=ids["design"], problem_id=ids["problem"], vote=vote)
        )
    ids["turn1"] = add(services, "session", "What keeps writes safe?", metadata={"session_id": "s1"})
    ids["turn2"] = add(services, "session", "The WAL, fsynced.", metadata={"session_id": "s1"})
    ids["gone"] = add(
        services,
        "design",
        "An idea we dropped.",
        relationships=[{"type": "RELATES_TO", "target_id": ids["design"]}],
    )
    services.memory.delete(ids["gone"])
    services.stores.graph.upsert_edges(
        [GraphEdge("TESTS", "Function", "tests.test_wal", "Memory", ids["req"])]
    )
    marker = StaleMarker(services.memory, services.memory._writer, "integration")
    edge = GraphEdge("CITES", "Memory", ids["req"], "Function", "db.open")
    services.stores.graph.upsert_edges([edge])
    assert marker.mark([edge], {"db.open": "function open (db.py) changed"}) == 1
    return ids


def test_round_trip_into_an_empty_store_is_lossless(services: Services, tmp_path: Path) -> None:
    ids = build_corpus(services)
    first = export(services, tmp_path / "first.jsonl", include_deleted=True, include_embeddings=True)
    lines = [json.loads(line) for line in body(first)]
    assert len(lines) == len(ids)
    by_id = {line["memory"]["id"]: line for line in lines}
    assert by_id[ids["design"]]["memory"]["version"] == 2
    assert [v["vote"] for v in by_id[ids["design"]]["votes"]] == [1.0, -0.5]
    assert by_id[ids["fact"]]["memory"]["metadata"]["superseded_by"] == ids["new_fact"]
    assert by_id[ids["gone"]]["memory"]["status"] == "deleted"
    assert by_id[ids["gone"]]["memory"]["removed_relationships"]
    assert by_id[ids["req"]]["memory"]["stale"]["code_ids"] == ["db.open"]
    edge_types = sorted(e["type"] for line in lines for e in line["relationships"])
    assert edge_types == sorted(["RELATES_TO", "TESTS", "CITES", "SUPERSEDES", "SUPERSEDES", "INTRODUCES"])
    assert all(len(line["embedding"]) == 384 for line in lines)

    with other_services(tmp_path, "b") as target:
        out = import_(target, first)
        assert (out.imported, out.skipped, out.relationships_imported, out.votes_imported) == (
            len(ids),
            0,
            6,
            2,
        )
        assert out.vectors_reused == len(ids) and out.reembedded == 0
        second = export(target, tmp_path / "second.jsonl", include_deleted=True, include_embeddings=True)
        assert body(second) == body(first)
        assert target.stores.votes.of([ids["design"]]) == {ids["design"]: [1.0, -0.5]}
        events = target.stores.audit.list(ids["design"])
        assert [e.operation for e in events] == ["import"]
        assert events[0].details["source"] == "first.jsonl" and events[0].details["version"] == 2
        # Importing the same file again changes nothing: no new votes, no new versions.
        again = import_(target, first)
        assert (again.imported, again.skipped, again.votes_imported) == (0, len(ids), 0)
        assert target.stores.votes.of([ids["design"]]) == {ids["design"]: [1.0, -0.5]}
        again = import_(target, first, conflict_resolution="merge")
        assert (again.merged, again.skipped, again.votes_imported) == (0, len(ids), 0)
        assert body(
            export(target, tmp_path / "third.jsonl", include_deleted=True, include_embeddings=True)
        ) == body(first)


def test_an_imported_store_answers_searches_as_the_original(
    services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Templated notes score exactly alike for many queries (ties), and two sessions interleave:
    # their context vectors depend on the turns before them, whatever order the file lists them in.
    services_list = ["billing", "search", "audit", "gateway"]
    items = [
        {"type": "design", "content": f"The {svc} service keeps its cache in Redis with a short TTL."}
        for svc in services_list
    ]
    items += [
        {"type": "session", "content": f"Turn {i}: we moved the {services_list[i % 4]} cache to Redis.",
         "metadata": {"session_id": f"s{i % 2}"}}
        for i in range(12)
    ]  # fmt: skip
    services.memory.bulk_add(MemoryBulkAddRequest(memories=items))
    questions = ["where is the cache kept", "Redis TTL", "what did we move in turn 5", "gateway service"]

    def answers(store: Services) -> list[list[tuple[str, float]]]:
        out = []
        for q in questions:
            hits = store.search.search(MemorySearchInput(query=q, limit=10)).results
            out.append([(h.memory_id, round(h.relevance_score, 6)) for h in hits])
        return out

    expected = answers(services)
    # Small import batches: a session turn's earlier turns are then in other batches.
    monkeypatch.setattr(portability_import, "BATCH", 3)
    files = []
    for embeddings in (True, False):
        files.append(export(services, tmp_path / f"all-{embeddings}.jsonl", include_embeddings=embeddings))
    # A file edited by hand (here: memories newest first, the trailer's checksum dropped as the
    # format says) imports the same: memories are written in creation order whatever the file's.
    header, *lines, trailer = files[0].read_text().splitlines()
    end = {k: v for k, v in json.loads(trailer).items() if k != "sha256"}
    reordered = tmp_path / "newest-first.jsonl"
    reordered.write_text("\n".join([header, *reversed(lines), json.dumps(end)]) + "\n")
    for n, path in enumerate([*files, reordered]):
        with other_services(tmp_path, f"copy-{n}") as target:
            import_(target, path)
            assert answers(target) == expected, path.name


def test_conflict_modes_and_dry_run(services: Services, tmp_path: Path) -> None:
    mid = add(services, "design", "Cache search results for five minutes.", metadata={"owner": "a"})
    v1 = export(services, tmp_path / "v1.jsonl")
    update = MemoryUpdateInput(memory_id=mid, content="Cache results for one minute.", metadata={"team": "s"})
    services.memory.update(update)
    services.memory.update(MemoryUpdateInput(memory_id=mid, content="Cache results for ten seconds."))
    v3 = export(services, tmp_path / "v3.jsonl")
    with other_services(tmp_path, "b") as target:
        assert import_(target, v1).imported == 1
        target.memory.update(MemoryUpdateInput(memory_id=mid, metadata={"reviewer": "b"}))  # ours: version 2

        def record() -> dict[str, Any]:
            return target.memory.load(mid).model_dump(mode="json")

        before = record()
        assert (import_(target, v3).skipped, record()) == (1, before)
        dry = import_(target, v3, conflict_resolution="overwrite", dry_run=True)
        assert (dry.updated, dry.dry_run, record()) == (1, True, before)
        dry = import_(target, v3, conflict_resolution="merge", dry_run=True)
        assert (dry.merged, record()) == (1, before)
        assert import_(target, v3, conflict_resolution="merge").merged == 1
        after = record()  # the file's version 3 beats our 2: its content, both metadata, version 4
        assert after["content"] == "Cache results for ten seconds." and after["version"] == 4
        assert after["metadata"] == {"owner": "a", "team": "s", "reviewer": "b"}
        assert import_(target, v3, conflict_resolution="merge").skipped == 1  # nothing more to add
        assert import_(target, v3, conflict_resolution="overwrite").updated == 1
        assert record() == json.loads(body(v3)[0])["memory"]  # the file's record, exactly
        imports = [e.details for e in target.stores.audit.list(mid, limit=20) if e.operation == "import"]
        assert sorted((d["outcome"], d["mode"], d["version"]) for d in imports) == [
            ("created", "skip", 1),
            ("merged", "merge", 4),
            ("updated", "overwrite", 3),
        ]


def test_export_filters(services: Services, tmp_path: Path) -> None:
    design = add(services, "design", "Filters: a design.")
    add(services, "requirements", "Filters: a requirement.")
    gone = add(services, "design", "Filters: a deleted design.")
    services.memory.delete(gone)
    cut = datetime.now(UTC)
    later = add(services, "design", "Filters: a later design.")

    def ids(**kwargs: Any) -> set[str]:
        name = f"f{len(list(tmp_path.glob('f*.jsonl')))}.jsonl"
        return {
            json.loads(line)["memory"]["id"] for line in body(export(services, tmp_path / name, **kwargs))
        }

    assert ids(memory_types=["design"]) == {design, later}
    assert ids(memory_types=["design"], include_deleted=True) == {design, later, gone}
    assert ids(since=cut) == {later}
    assert ids(until=cut, memory_types=["design"]) == {design}
    assert ids(project="elsewhere") == set()
    with pytest.raises(ValidationError) as bad:
        ids(memory_types=["nonsense"])
    assert bad.value.code == "VAL_INVALID_TYPE"


def test_export_never_replaces_a_file_and_leaves_nothing_when_it_fails(
    services: Services, tmp_path: Path
) -> None:
    add(services, "design", "Exports are written to a temporary file first.")
    target = tmp_path / "taken.jsonl"
    target.write_text("mine")
    with pytest.raises(ConflictError) as taken:
        export(services, target)
    assert taken.value.code == "CON_EXPORT_FILE_EXISTS" and target.read_text() == "mine"

    def boom(done: int, total: int) -> None:
        raise RuntimeError("disk full")

    fresh = tmp_path / "fresh.jsonl"
    with pytest.raises(RuntimeError):
        services.portability.export(ExportMemoryInput(output_path=str(fresh)), boom, trusted_path=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["taken.jsonl"]  # no partial file
    default = services.portability.export(ExportMemoryInput())
    assert Path(default.file_path).parent == services.settings.resolved_data_dir / "exports"


def _valid_file(services: Services, tmp_path: Path) -> list[str]:
    for i in range(3):
        add(services, "design", f"Bad-file corpus item {i}.")
    return export(services, tmp_path / "good.jsonl").read_text().splitlines()


def _damage(lines: list[str], case: str) -> str:
    header = json.loads(lines[0])
    memory = json.loads(lines[2])
    cases = {
        "truncated last line": "\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2],
        "no trailer": "\n".join(lines[:-1]) + "\n",
        "corrupt middle line": "\n".join([*lines[:2], lines[2][:40] + "#" + lines[2][41:], *lines[3:]])
        + "\n",
        "other format version": "\n".join([json.dumps({**header, "format_version": 99}), *lines[1:]]) + "\n",
        "missing header": "\n".join(lines[1:]) + "\n",
        "wrong count": "\n".join([*lines[:2], *lines[3:]]) + "\n",
        "edited content": "\n".join(
            [*lines[:2], json.dumps({**memory, "memory": {**memory["memory"], "content": "x"}}), *lines[3:]]
        )
        + "\n",
        "empty": "",
    }
    return cases[case]


@pytest.mark.parametrize(
    ("case", "code", "line"),
    [
        ("truncated last line", "VAL_IMPORT_FILE", 5),
        ("no trailer", "VAL_IMPORT_FILE", 4),
        ("corrupt middle line", "VAL_IMPORT_FILE", 3),
        ("other format version", "VAL_IMPORT_VERSION", None),
        ("missing header", "VAL_IMPORT_FILE", 1),
        ("wrong count", "VAL_IMPORT_FILE", 4),
        ("edited content", "VAL_IMPORT_FILE", 3),
        ("empty", "VAL_IMPORT_FILE", 1),
    ],
)
def test_a_bad_file_is_refused_whole(
    services: Services, tmp_path: Path, case: str, code: str, line: int | None
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_damage(_valid_file(services, tmp_path), case))
    with other_services(tmp_path, "b") as target:
        with pytest.raises(MemoryServiceError) as refused:
            import_(target, bad)
        error = refused.value
        assert error.code == code, error.message
        if line is not None:
            assert error.details["errors"][0]["line"] == line, error.details
            assert error.message.startswith(f"Line {line} of bad.jsonl")
        else:
            assert error.details["format_version"] == 99
        assert count(target) == 0  # nothing half-imported
        assert not list((target.settings.resolved_data_dir / "imports").glob("*"))  # no copy left


def test_mcp_paths_stay_inside_the_roots(services: Services, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    with pytest.raises(ValidationError) as refused:
        services.portability.export(ExportMemoryInput(output_path=str(outside)))
    assert refused.value.code == "VAL_PATH_OUTSIDE_ROOTS" and "memory-cli" in refused.value.suggestion
    with pytest.raises(ValidationError) as refused:
        services.portability.import_file(ImportMemoryInput(file_path="/etc/hostname"))
    assert refused.value.code == "VAL_PATH_OUTSIDE_ROOTS"
    inside = services.portability.export(ExportMemoryInput(output_path="inside.jsonl"))
    assert inside.file_path == str(tmp_path / "inside.jsonl")  # relative to the project root
