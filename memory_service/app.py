"""Wiring: open the stores one process owns, build the services, start housekeeping (housekeeping.py).

The server and the CLI both start here, so there is one place that owns the engine handles
(ROADMAP 6: a forwarder can later sit in front of it).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_service import __version__
from memory_service.core.code.index import CodeIndexer
from memory_service.core.code.paths import PathPolicy
from memory_service.core.code.search import CodeSearch
from memory_service.core.code.service import IndexService
from memory_service.core.code.stale import StaleMarker
from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.core.graph.consistency import ConsistencyService
from memory_service.core.graph.design_context import DesignContextService
from memory_service.core.graph.fix_validation import FixValidationService
from memory_service.core.graph.query import GraphToolsService
from memory_service.core.graph.trace import TraceService
from memory_service.core.jobs import JobManager
from memory_service.core.maintenance.embedding_refresh import EmbeddingRefresher
from memory_service.core.maintenance.expiry import ExpiryService
from memory_service.core.maintenance.normalize.service import NormalizeService
from memory_service.core.maintenance.statistics import StatisticsService
from memory_service.core.maintenance.telemetry import Telemetry
from memory_service.core.memory.archive import ArchiveService
from memory_service.core.memory.audit import AuditQueryService
from memory_service.core.memory.feedback import FeedbackService
from memory_service.core.memory.service import MemoryService
from memory_service.core.memory.supersede import SupersedeService
from memory_service.core.models import Scope
from memory_service.core.portability.service import PortabilityConfig, PortabilityService
from memory_service.core.ports import ComponentHealth
from memory_service.core.records import Stores
from memory_service.core.redaction import sanitize
from memory_service.core.scopes import CallerScope, ProjectOrigin
from memory_service.core.search.explain import ExplainService
from memory_service.core.search.ranker import Ranker
from memory_service.core.search.service import SearchService
from memory_service.core.write.gate import WriteGate
from memory_service.core.write.graph_sync import GraphSync
from memory_service.core.write.threads import ThreadContext
from memory_service.core.write.writer import RecordWriter
from memory_service.housekeeping import Housekeeper
from memory_service.project import head_branch
from memory_service.settings import Settings
from memory_service.stores import access as store_access
from memory_service.stores.factory import build_stores
from memory_service.stores.graph import salvage as graph_salvage
from memory_service.stores.local.db import DB_FILENAME
from memory_service.stores.owner_lock import OwnerLock
from memory_service.stores.presence import StorePresence
from memory_service.stores.qdrant import salvage as vector_salvage

if TYPE_CHECKING:
    from memory_service.observability.metrics import Metrics

logger = logging.getLogger(__name__)

# What each settings backend is, as statistics and health name it.
BACKEND_NAMES = {"edge": "qdrant-edge", "server": "qdrant", "embedded": "ladybug", "neo4j": "neo4j"}


@dataclass
class Services:
    settings: Settings
    stores: Stores
    sync: GraphSync
    memory: MemoryService
    search: SearchService
    explain: ExplainService
    feedback: FeedbackService
    supersede: SupersedeService
    archive: ArchiveService  # archive / restore (memory_update archived, seed 002 archive_state)
    index: IndexService
    code: CodeSearch
    graph: GraphToolsService
    trace: TraceService
    design: DesignContextService
    consistency: ConsistencyService
    fix: FixValidationService
    portability: PortabilityService  # export_memory / import_memory (JSONL)
    jobs: JobManager  # every background job (indexing, normalization): one worker, one status store
    telemetry: Telemetry  # live latency counters since start (memory_statistics, later /metrics)
    statistics: StatisticsService
    audit: AuditQueryService
    normalize: NormalizeService
    expiry: ExpiryService  # the TTL sweep (housekeeping runs it)
    lock: OwnerLock
    # Every tool call, job and housekeeping tick passes it; an online backup closes it (write_gate.py).
    gate: WriteGate = field(default_factory=WriteGate)
    _housekeeper: Housekeeper | None = field(default=None, repr=False)
    presence: StorePresence | None = field(default=None, repr=False)  # store losses and their alarms

    def health(self) -> list[ComponentHealth]:
        parts = []
        stores = self.stores
        for name, store in (
            ("vectors", stores.vectors),
            ("graph", stores.graph),
            ("cache", stores.cache),
            ("queue", stores.queue),
        ):
            try:
                parts.append(store.health())
            except MemoryServiceError as exc:
                parts.append(ComponentHealth(name, "unavailable", "?", exc.message))
        parts.append(self.stores.embedder.health())
        if self.presence is not None:
            parts.append(self.presence.health())
        return parts

    def stats(self) -> dict[str, Any]:
        """memory_statistics' answer as JSON (memory-cli stats)."""
        return self.statistics.statistics().model_dump(mode="json")

    def close(self) -> None:
        self.close_stores()
        self.lock.release()

    def close_stores(self) -> None:
        """Stop background work and close every store, keeping the data directory's owner lock
        (memory-cli backup copies the files while it still owns them)."""
        # A process that exits while the model loads dies in ONNX Runtime's native threads
        # ("terminate called without an active exception"); a load takes a second or two.
        self.stores.embedder.wait_ready(timeout=10)
        self.jobs.shutdown()
        if self._housekeeper is not None:
            self._housekeeper.stop()
        with contextlib.suppress(MemoryServiceError):  # left queued; the next start retries it
            self.sync.drain()
        if self.presence is not None:
            self.presence.record_stop()  # what a refusal at the next start names
        self.stores.close()


def _consumer_name(settings: Settings) -> str:
    """The graph-sync consumer name: ``host:<data directory hash>``. One process at a time owns a
    data directory (owner.lock), so its successor (a daemon restarted after kill -9) takes back at
    start what it held, instead of waiting out the queue's visibility timeout with the topic's
    head blocked behind it."""
    digest = hashlib.sha256(str(settings.resolved_data_dir.expanduser().resolve()).encode()).hexdigest()
    return f"{socket.gethostname()}:{digest[:12]}"


def open_services(
    settings: Settings,
    *,
    housekeeping: bool = True,
    metrics: Metrics | None = None,
    repair: bool = False,
    accept_empty: bool = False,
) -> Services:
    """Take ownership of the data directory and open everything; the model loads in the background.

    With ``metrics`` (the server, when /metrics is on), tool calls, store operations and embeddings
    are recorded there (memory_service/observability)."""
    data_dir = settings.resolved_data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = OwnerLock(data_dir)
    lock.acquire()
    presence = StorePresence(settings)  # a store that existed and is gone is an alarm, not a fresh start
    stores = _open_stores(settings, lock, presence, metrics=metrics, repair=repair, accept_empty=accept_empty)
    sync, writer = _recover_writes(settings, stores)
    services = _build_services(settings, stores, sync, writer, lock, metrics)
    writer.drain_quietly()
    gaps = presence.check_records(stores, full=repair)
    presence.check_graph(sync.pending().get("pending", 0), gaps)
    presence.record(stores)
    services.presence = presence
    if housekeeping:
        refresher = EmbeddingRefresher(stores, writer, services.memory.locks)
        services._housekeeper = Housekeeper(services, refresher)
        services._housekeeper.start()
    return services


def _open_stores(
    settings: Settings,
    lock: OwnerLock,
    presence: StorePresence,
    *,
    metrics: Metrics | None,
    repair: bool,
    accept_empty: bool,
) -> Stores:
    """Check the data directory's files, then open every store and its collections (the model
    starts loading); the owner lock is released when any of it fails."""
    try:
        store_access.check_writable(settings)  # a permission problem, before any engine opens a file
        presence.check_files(accept_empty=accept_empty)
        if repair and settings.graph.backend == "embedded":
            presence.graph_repair = graph_salvage.prepare(settings)  # moves a damaged graph aside
        if repair:
            presence.vector_repair = vector_salvage.prepare(settings)  # and damaged vector files
        stores = build_stores(settings)
    except BaseException:
        lock.release()
        raise
    if metrics is not None:
        from memory_service.observability.instrument import instrument

        stores = instrument(stores, metrics)
    stores.embedder.start()  # type: ignore[attr-defined]
    try:
        _open_collections(stores, settings.embedding.dim)
        moved = bool(presence.vector_repair and presence.vector_repair.moved)
        presence.check_vectors(stores, accept_empty=accept_empty or moved)
    except BaseException:
        stores.embedder.wait_ready(timeout=10)
        stores.close()
        lock.release()
        raise
    return stores


def _recover_writes(settings: Settings, stores: Stores) -> tuple[GraphSync, RecordWriter]:
    """The graph sync and the record writer, each after finishing what a crash left behind."""
    sync = GraphSync(stores.queue, stores.graph, consumer=_consumer_name(settings))
    # What a crashed run left held: ours by name (the previous owner of this data directory, even
    # killed with -9: the name is the directory's), dead consumers' after the visibility timeout;
    # the embedded queue has no consumer but the data directory's owner (us), so all of it.
    sync.recover(sole_consumer=settings.redis.backend == "sqlite")
    threads = ThreadContext(
        stores.vectors, turns=settings.memory.context_turns, max_chars=settings.memory.context_chars
    )
    writer = RecordWriter(
        stores, sync, model_wait_seconds=settings.embedding.load_timeout_seconds, threads=threads
    )
    writer.recover()  # writes a crash interrupted: finished or dropped before anything is served
    return sync, writer


def _build_services(
    settings: Settings,
    stores: Stores,
    sync: GraphSync,
    writer: RecordWriter,
    lock: OwnerLock,
    metrics: Metrics | None,
) -> Services:
    """Every service over the open stores, in the bundle the tools, CLI and daemon use."""
    data_dir = settings.resolved_data_dir
    sanitize.configure(redact=settings.memory.redact_secrets)
    scope = caller_scope(settings)
    paths = PathPolicy(settings.project_root, settings.indexer.allowed_roots, settings.indexer.max_file_bytes)
    origin = project_origin(settings)
    memory = MemoryService(stores, writer, settings.memory, scope, settings.actor, notice=origin.notice())
    stale = StaleMarker(memory, writer, settings.actor)
    indexer = CodeIndexer(
        stores,
        stores.index_state,
        paths,
        settings.project,
        settings.indexer.batch_units,
        stale.mark,
        sync=sync,
    )
    archive = ArchiveService(stores, writer, memory, settings.actor)
    memory.attach_archiver(archive)
    search = SearchService(Ranker(stores, settings.ranking, scope))
    gate = WriteGate()
    jobs = JobManager(stores.cache, gate=gate)
    telemetry = Telemetry(metrics)
    index = IndexService(stores, indexer, paths, jobs, settings.actor)
    services = Services(
        settings=settings,
        stores=stores,
        sync=sync,
        memory=memory,
        search=search,
        explain=ExplainService(search, scope),
        feedback=FeedbackService(stores, writer, memory, settings.actor),
        supersede=SupersedeService(stores, writer, memory, settings.actor),
        archive=archive,
        index=index,
        code=CodeSearch(stores),
        graph=GraphToolsService(
            stores.graph,
            allow_writes=settings.graph.allow_writes,
            timeout_ms=settings.graph.query_timeout_ms,
            audit=stores.audit,
            actor=settings.actor,
        ),
        trace=TraceService(stores.vectors, stores.graph, stores.sparse),
        design=DesignContextService(stores.vectors, stores.graph),
        consistency=ConsistencyService(stores.vectors, stores.graph),
        fix=FixValidationService(stores.vectors, stores.graph),
        portability=PortabilityService(
            stores,
            sync,
            writer,
            memory,
            PortabilityConfig(
                data_dir=settings.resolved_data_dir,
                project_root=settings.project_root,
                allowed_roots=list(settings.indexer.allowed_roots),
                actor=settings.actor,
                dim=settings.embedding.dim,
                service_version=__version__,
            ),
        ),
        jobs=jobs,
        telemetry=telemetry,
        statistics=StatisticsService(
            stores,
            sync,
            telemetry,
            jobs,
            index_totals=index.totals,
            health=lambda: services.health(),
            backends={
                "vectors": BACKEND_NAMES[str(settings.qdrant.backend)],
                "graph": BACKEND_NAMES[str(settings.graph.backend)],
                "cache": str(settings.redis.backend),
            },
            local_bytes=lambda: _local_bytes(data_dir),
            project=origin,
        ),
        audit=AuditQueryService(stores.audit),
        normalize=NormalizeService(
            stores,
            writer,
            memory,
            stale,
            sync,
            jobs,
            settings.actor,
            context_turns=settings.memory.context_turns,
            model_wait_seconds=settings.embedding.load_timeout_seconds,
        ),
        expiry=ExpiryService(stores.vectors, memory),
        lock=lock,
        gate=gate,
    )
    return services


def _open_collections(stores: Stores, dim: int) -> None:
    """Load (or create) the collections; one that does not load is damaged: say what to do."""
    for spec in vector_salvage.collection_specs(dim):
        try:
            stores.vectors.ensure_collection(spec)
        except ServiceUnavailableError as exc:
            if graph_salvage.permission_problem(exc):
                raise
            raise ServiceUnavailableError(
                f"The vector collection '{spec.name}' does not load: {exc.message}",
                code="SVC_STORE_DAMAGED",
                details=exc.details,
                suggestion="Stop the server and run `memory-cli repair`: it moves the damaged files "
                "aside (never deletes them), loads what is left and reports any memory it cannot "
                "recover, by id; or restore the data directory from a backup (memory-cli restore).",
            ) from exc


def caller_scope(settings: Settings) -> CallerScope:
    """The caller's scope from settings; the branch follows the checkout unless MEMORY_BRANCH fixes it."""
    base = Scope(
        org=settings.org,
        project=settings.project,
        service=settings.service,
        branch=settings.branch,
        sprint=settings.sprint,
        tenant=settings.tenant,
    )
    root = settings.project_root  # the git top level when started inside a work tree
    follows = "branch" not in settings.model_fields_set  # MEMORY_BRANCH (or an argument) pins it
    probe = (lambda: head_branch(root)) if follows and (root / ".git").exists() else None
    return CallerScope(base, probe)


def project_origin(settings: Settings) -> ProjectOrigin:
    """The caller's project and which rule named it (settings' ``project_source``)."""
    assert settings.project is not None  # settings always name one (the folder, at worst)
    return ProjectOrigin(settings.project, settings.project_source, str(settings.project_root))


def _local_bytes(data_dir: Path) -> int:
    """The data directory's SQLite file and its WAL, on disk."""
    files = (data_dir / DB_FILENAME, data_dir / f"{DB_FILENAME}-wal")
    return sum(f.stat().st_size for f in files if f.exists())
