"""Settings: one root with a section per concern; env prefix ``MEMORY_``, nested delimiter ``__``.

Nothing is read at import time: call :func:`load_settings` (or ``Settings()``) when starting.
Defaults give a working embedded setup with no server to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory_service.project import (
    DEFAULT_PROJECT,
    default_data_dir,
    folder_project,
    git_remote,
    git_toplevel,
    head_branch,
    project_slug,
)


class EmbeddingSettings(BaseModel):
    model_name: str = "sentence-transformers/all-MiniLM-L6-v2"
    # A local folder with the ONNX export (offline use, tests, CI); None lets fastembed fetch once.
    model_path: Path | None = None
    # The fp32 export is quantised on this machine once (embeddings/quantize.py) and that copy is
    # loaded. int8-rows (the default): the layers in int8 with one activation scale per token (the
    # feed-forward down-projections fp32): ~1.5x faster than fp32, vectors within cosine 0.997 of
    # fp32's, runs of several texts kept, and every quality target of docs/benchmarks.md held.
    # mixed: only the token-embedding tables in int8 (~35 MB smaller than fp32, fp32's speed,
    # vectors within cosine 0.999 of fp32's). int8: the layers with one scale per run: ~1.6x
    # faster, but code_search top-3 0.84-0.88 instead of 0.89 (docs/benchmarks.md). fp32: the
    # export as it is. A folder that holds a quantised model is loaded as it is with any value.
    precision: Literal["mixed", "fp32", "int8", "int8-rows"] = "int8-rows"
    dim: int = 384
    threads: int = 2
    # Texts per model run. Small runs are faster and lighter here: on 2 cores, 6,000 short texts
    # embedded at 364 texts/s with runs of 8 and 292/s with runs of 50, and the process grew by
    # 209 MB instead of 328 MB (ONNX Runtime's arena keeps the largest run's buffers).
    batch_size: int = Field(8, ge=1)
    load_timeout_seconds: float = 120.0


class VectorSettings(BaseModel):
    """Vectors: embedded qdrant-edge, or a Qdrant server when ``url`` is set."""

    backend: Literal["edge", "server"] | None = None  # None: "server" when url or path is set
    url: str | None = None
    api_key: SecretStr | None = None
    # qdrant-client's local mode on this folder: the server adapter without a server (tests,
    # trials; single process, no HNSW, see docs/architecture.md). Exclusive with url.
    path: Path | None = None
    # Collection-name prefix on a server, so several projects can share one (default: project name).
    collection_prefix: str | None = None
    timeout_seconds: float = Field(10.0, gt=0)
    # Build the HNSW index in the background once this many points are unindexed.
    optimize_after_points: int = 5000


class GraphSettings(BaseModel):
    """Graph: embedded LadybugDB, or Neo4j when ``uri`` (bolt://, neo4j://, neo4j+s://...) is set."""

    backend: Literal["embedded", "neo4j"] | None = None  # None: "neo4j" when uri is set
    uri: str | None = None
    # Neo4j: the project's graph on a shared server is the nodes carrying this namespace (default:
    # the project name), so several projects can share one database. LadybugDB: one per data dir.
    namespace: str | None = None
    user: str = "neo4j"
    password: SecretStr | None = None
    database: str = "neo4j"
    # Embedded engine: memory for cached pages, and worker threads per query.
    buffer_pool_mb: int = Field(256, ge=16)
    threads: int = Field(2, ge=1)
    # graph_query: users' Cypher is read-only unless this is set (writes bypass the memory tools).
    allow_writes: bool = False
    # graph_query: a user's query is cancelled after this long (both engines).
    query_timeout_ms: int = Field(30_000, ge=100)


class RedisSettings(BaseModel):
    """Cache, graph-sync queue and job state: local SQLite, or Redis when ``url`` is set."""

    backend: Literal["sqlite", "redis"] | None = None  # None: "redis" when url is set
    url: SecretStr | None = None  # redis://[:password@]host:port/db; may carry a password
    # Key prefix, so several projects can share one server (default: "memory:<project>:").
    key_prefix: str | None = None


class MemorySettings(BaseModel):
    conflict_threshold: float = Field(0.85, ge=0.0, le=1.0)
    conflict_limit: int = Field(5, ge=0, le=50)
    # Thread context (core/write/threads.py): memories of a session (metadata.session_id) are
    # also embedded with the `context_turns` memories before them, each cut to `context_chars`.
    # 0 turns turns it off. Tuned on LoCoMo's dev split (docs/search.md).
    context_turns: int = Field(2, ge=0, le=8)
    context_chars: int = Field(400, ge=50, le=4000)
    # Governance (docs/governance.md): secrets masked before anything is stored, logged or sent;
    # a store that repeats an earlier one (same kind, scope, source and content) is skipped;
    # expired memories are soft-deleted by a sweep this often (0: never; reads hide them anyway).
    redact_secrets: bool = True
    dedupe: bool = True
    ttl_sweep_seconds: float = Field(3600.0, ge=0)


class RankingWeights(BaseModel):
    """Weights of the re-score components (seed 004 FR-024 generalised); each component is in [0, 1]
    except ``utility`` ([-1, 1]), and the total is their weighted sum."""

    base: float = Field(0.70, ge=0)
    # The dense cosine itself (seed 000's semantic_boost): RRF keeps only ranks, this keeps margins.
    semantic: float = Field(0.0, ge=0)
    recency: float = Field(0.05, ge=0)
    kind: float = Field(0.05, ge=0)
    scope: float = Field(0.05, ge=0)
    citations: float = Field(0.05, ge=0)
    utility: float = Field(0.05, ge=0)
    graph: float = Field(0.05, ge=0)
    # Support from the memory's thread (core.ranking.thread_support); 0.15 was tuned on LoCoMo's
    # dev split (R@5 +0.016 in the experiment, docs/search.md).
    thread: float = Field(0.15, ge=0)
    # Query cues (core/search/cues.py), each null when it does not apply: a "when" question and a memory
    # that states a time; a month or year the question names and the memory's date; the question
    # naming the memory's speaker. Fitted on LoCoMo's dev split only (a listwise model over the
    # components, then a grid of round values: R@5 0.756 -> 0.806 there; docs/search.md).
    time: float = Field(0.2, ge=0)
    date: float = Field(0.3, ge=0)
    speaker: float = Field(0.3, ge=0)


# Every weight 0: the exact formulas below name what they weigh, and a component added later
# (the query cues, say) never leaks into them.
_ZERO = dict.fromkeys(RankingWeights.model_fields, 0.0)
# Named weight profiles. "seed004" is the formula of seed 004 (FR-024):
# 0.4 x relevance + 0.3 x recency + 0.2 x scope proximity + 0.1 x citation count.
RANKING_PROFILES: dict[str, RankingWeights] = {
    "default": RankingWeights(),
    "seed004": RankingWeights(**{**_ZERO, "base": 0.4, "recency": 0.3, "scope": 0.2, "citations": 0.1}),
    "relevance": RankingWeights(**{**_ZERO, "base": 1.0}),
}


class RankingSettings(BaseModel):
    """How memory_search / memory_explain rank: candidate fusion, then a weighted re-score.

    ``profile`` names a weight set in :data:`RANKING_PROFILES`; ``weights`` overrides it. The
    default profile keeps relevance dominant: recency, scope and the rest separate near-ties
    rather than overturn a clearly better match (a coding agent asks about old decisions too).
    """

    profile: Literal["default", "seed004", "relevance"] = "default"
    weights: RankingWeights | None = None
    # Candidate sources fused by reciprocal-rank fusion: 1 / (rrf_k + rank), weighted per source.
    fusion: Literal["rrf", "dense", "sparse"] = "rrf"
    # k = 5 and BM25 at 1.3x were tuned on LoCoMo's dev split (bench/locomo_recall.py): a small k
    # lets a clear first place in either list count, which k = 60 (the usual default) flattens.
    rrf_k: int = Field(5, ge=1)
    dense_weight: float = Field(1.0, ge=0)
    sparse_weight: float = Field(1.3, ge=0)
    # Candidates fetched per source: max(limit x factor, min_candidates).
    candidate_factor: int = Field(3, ge=1)
    min_candidates: int = Field(30, ge=1)
    # The sources are fused by id first; only the best pool x rescore_factor memories of the fusion
    # are read and re-scored (reading payloads is most of a search's cost at 100k memories).
    rescore_factor: float = Field(1.5, ge=0.1)
    # Feedback round ("semantic hops"): re-search from the top prf_docs hits (0 = off), adding
    # prf_terms of their terms to the lexical query; the new lists weigh prf_weight in the fusion.
    prf_docs: int = Field(1, ge=0, le=10)
    # Hops add no recall on LoCoMo dev once thread context is on (R@5 0.743 either way) and cost
    # a query embedding and two searches each, so auto mode makes none unless asked.
    auto_hops: int = Field(0, ge=0, le=3)
    deep_hops: int = Field(3, ge=0, le=3)
    prf_terms: int = Field(8, ge=1, le=50)
    prf_weight: float = Field(0.5, ge=0)
    # Weight of the thread-context lists (dense and BM25 over a memory read with the turns before
    # it) relative to the memory's own lists; 0 leaves context out of search.
    context_weight: float = Field(1.0, ge=0)
    # Citation count saturates here (log scale): 10 incoming links read as 1.0.
    citation_cap: int = Field(10, ge=1)
    # A result counts as "good" (for suggestions) at or above this confidence.
    good_confidence: float = Field(0.35, ge=0, le=1)

    def resolved_weights(self) -> RankingWeights:
        return self.weights or RANKING_PROFILES[self.profile]


class IndexerSettings(BaseModel):
    # Directories outside the project root that may be indexed (the project root always may).
    allowed_roots: list[Path] = Field(default_factory=list)
    max_file_bytes: int = Field(1_000_000, ge=1_000)
    # Units embedded and stored per batch: larger batches amortise model and store overhead.
    batch_units: int = Field(512, ge=16)
    max_job_wait_seconds: float = Field(3600.0, ge=1)


PROFILE_NAMES = ("default", "cortex-find-store", "cortex-os", "memory-interface-v1")


def split_profiles(value: str) -> list[str]:
    """The profiles a comma-separated setting names, in order, without repeats or blanks."""
    return list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))


class ServerSettings(BaseModel):
    name: str = "memory-service"
    # The response cap (seed 001 §4.3), in tokens estimated from above (core/tokens.py).
    max_response_tokens: int = Field(50_000, ge=1_000)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # Which contract the server speaks (docs/profiles.md): one of PROFILE_NAMES, or several
    # separated by commas (their union). Each MCP connection may ask for its own (the daemon
    # serves every profile; a forwarder passes its own).
    profile: str = "default"
    # "legal": names every client accepts (memory-find); "seed": the seeds' own (memory.find),
    # which Claude Code and Claude Desktop refuse.
    tool_names: Literal["legal", "seed"] = "legal"
    # The HTTP side server (docs/observability.md): /health/live, /health/ready, /metrics, /stats.
    # Loopback by default; port 0 takes a free port (tests, several servers on one machine).
    http_enabled: bool = True
    http_host: str = "127.0.0.1"
    http_port: int = Field(9090, ge=0, le=65535)
    # Prometheus instrumentation of tools, stores and the model (off: /metrics answers 404).
    metrics_enabled: bool = True
    # MCP over streamable HTTP (`memory-service serve --http HOST:PORT`): the bearer token clients
    # must send; required for any bind that is not loopback.
    mcp_token: SecretStr | None = None

    @field_validator("profile")
    @classmethod
    def _known_profiles(cls, value: str) -> str:
        names = split_profiles(value)
        unknown = [n for n in names if n not in PROFILE_NAMES]
        if not names or unknown:
            raise ValueError(
                f"unknown tool profile {', '.join(map(repr, unknown)) or repr(value)}: use one of "
                f"{', '.join(PROFILE_NAMES)}, or several separated by commas"
            )
        return ",".join(names)


class DaemonSettings(BaseModel):
    """The per-data-directory daemon (docs/daemon.md): it owns the stores; every ``memory-service``
    started over stdio forwards to it, starting it when none runs."""

    # Off: each stdio process opens the stores itself (one process per data directory).
    enabled: bool = True
    # The daemon exits after this long with no client connected and no job running.
    idle_timeout_s: float = Field(300.0, ge=0)
    # How long a forwarder waits for a daemon it started to accept connections (model load, recovery).
    start_timeout_s: float = Field(120.0, gt=0)
    # Where the sockets live (a user-only directory); default: $XDG_RUNTIME_DIR, else the temp dir.
    socket_dir: Path | None = None


class Settings(BaseSettings):
    """Root settings. ``MEMORY_DATA_DIR``, ``MEMORY_PROJECT``, ``MEMORY_EMBEDDING__MODEL_PATH``..."""

    model_config = SettingsConfigDict(
        env_prefix="MEMORY_", env_nested_delimiter="__", extra="ignore", validate_default=True
    )

    project_root: Path = Field(default_factory=Path.cwd)
    # The caller's scope (seed 004): missing levels come from git (remote → org/project, repo
    # root → project, current branch → branch); without git and MEMORY_PROJECT, the folder the
    # server starts in names the project, as it names the data directory.
    project: str | None = None
    branch: str | None = None
    org: str | None = None
    service: str | None = None
    sprint: str | None = None
    tenant: str | None = None
    data_dir: Path | None = None
    # Who the audit names; left at "agent", each call's MCP client name is used (core/actor.py).
    actor: str = "agent"

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    qdrant: VectorSettings = Field(default_factory=VectorSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    memory: MemorySettings = Field(default_factory=lambda: MemorySettings())
    indexer: IndexerSettings = Field(default_factory=lambda: IndexerSettings())
    server: ServerSettings = Field(default_factory=lambda: ServerSettings())
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
    ranking: RankingSettings = Field(default_factory=lambda: RankingSettings())
    # Where ``project`` came from: one of project.PROJECT_SOURCES (memory_statistics says it).
    _project_source: str = PrivateAttr(default="setting")

    @model_validator(mode="after")
    def _backends(self) -> Settings:
        """One backend per section: from its address when not named; contradictions refused."""
        sections = (
            ("qdrant", self.qdrant, "url", self.qdrant.url or self.qdrant.path, "server", "edge"),
            ("graph", self.graph, "uri", self.graph.uri, "neo4j", "embedded"),
            ("redis", self.redis, "url", self.redis.url, "redis", "sqlite"),
        )
        if self.qdrant.url and self.qdrant.path:
            raise ValueError("MEMORY_QDRANT__URL and MEMORY_QDRANT__PATH are both set: unset one of them")
        for name, section, key, address, server, local in sections:
            env = f"MEMORY_{name.upper()}__"
            if section.backend is None:
                section.backend = server if address else local  # type: ignore[assignment]
            elif section.backend == server and not address:
                raise ValueError(
                    f"{env}BACKEND is '{server}' but {env}{key.upper()} is not set: give the server's "
                    f"address, or unset {env}BACKEND to use the embedded store"
                )
            elif section.backend == local and address:
                raise ValueError(
                    f"{env}BACKEND is '{local}' but {env}{key.upper()} is set too: unset one of them"
                )
        return self

    @model_validator(mode="after")
    def _fill_derived(self) -> Settings:
        self.project_root = self.project_root.expanduser().resolve()
        git_root = git_toplevel(self.project_root)
        if git_root is not None:
            self.project_root = git_root
        if self.project:
            self._project_source = "setting"
        if git_root is not None:
            remote_org, remote_project = git_remote(git_root)
            if not self.project:
                self.project = remote_project or git_root.name or None
                self._project_source = "git remote" if remote_project else "git folder"
            if self.org is None:
                self.org = remote_org
            if self.branch is None:
                self.branch = head_branch(git_root)
        project = self.project
        if not project:  # no git, no MEMORY_PROJECT: the folder names it, else "default"
            project = self.project = folder_project(self.project_root)
            self._project_source = "folder" if project != DEFAULT_PROJECT else "default"
        if self.data_dir is None:
            self.data_dir = default_data_dir(project, self.project_root)
        self.data_dir = self.data_dir.expanduser()
        self.indexer.allowed_roots = [p.expanduser().resolve() for p in self.indexer.allowed_roots]
        if self.embedding.model_path is not None:
            self.embedding.model_path = self.embedding.model_path.expanduser().resolve()
        if self.qdrant.path is not None:
            self.qdrant.path = self.qdrant.path.expanduser().resolve()
        slug = project_slug(project)
        if self.qdrant.collection_prefix is None:
            self.qdrant.collection_prefix = f"{slug}__"
        if self.graph.namespace is None:
            self.graph.namespace = slug
        if self.redis.key_prefix is None:
            self.redis.key_prefix = f"memory:{slug}:"
        return self

    @property
    def resolved_data_dir(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir

    @property
    def project_source(self) -> str:
        """Where the project name came from: one of :data:`memory_service.project.PROJECT_SOURCES`."""
        return self._project_source


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment (and overrides) now, not at import time."""
    return Settings(**overrides)  # type: ignore[arg-type]
