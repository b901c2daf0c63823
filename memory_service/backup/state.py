"""What a backup records of the stores besides their files: kind, backends, servers, versions, counts.

The counts are read through the services (memories, edges, vectors, code index, audit), so a
restore can open the restored stores and prove they hold what was backed up. A backup of server
backends (``kind: export``) records only the figures an import brings back: the code index is
not in it (docs/backup.md).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from memory_service import __version__
from memory_service.core.code.records import CODE_COLLECTIONS
from memory_service.core.errors import ValidationError
from memory_service.core.records import MEMORIES, MEMORY_LABEL
from memory_service.settings import Settings


def backends(settings: Settings) -> dict[str, str]:
    return {
        "vectors": str(settings.qdrant.backend),
        "graph": str(settings.graph.backend),
        "cache": str(settings.redis.backend),
    }


def is_embedded(settings: Settings) -> bool:
    return backends(settings) == {"vectors": "edge", "graph": "embedded", "cache": "sqlite"}


def kind(settings: Settings) -> str:
    """``files``: every store is in the data directory, so a copy of it is the backup.
    ``export``: memories live on servers, so the backup is the local files plus an export."""
    return "files" if is_embedded(settings) else "export"


def code_on_servers(settings: Settings) -> bool:
    """Whether code vectors or the code graph live on a server (not in the copied files)."""
    return settings.qdrant.backend == "server" or settings.graph.backend == "neo4j"


def _address(url: str | None) -> str | None:
    """A server address without credentials (a Redis URL may carry a password)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def servers(settings: Settings) -> dict[str, Any]:
    """Which servers (and which part of each: prefix, namespace) the memories came from."""
    out: dict[str, Any] = {}
    q, g, r = settings.qdrant, settings.graph, settings.redis
    if q.backend == "server":
        where = {"url": _address(q.url)} if q.url else {"path": str(q.path)}
        out["qdrant"] = {**where, "collection_prefix": q.collection_prefix or ""}
    if g.backend == "neo4j":
        out["neo4j"] = {"uri": _address(g.uri), "database": g.database, "namespace": g.namespace}
    if r.backend == "redis":
        url = r.url.get_secret_value() if r.url else None
        out["redis"] = {"url": _address(url), "key_prefix": r.key_prefix}
    return out


def store_counts(services: Any) -> dict[str, Any]:
    """What the stores hold, read through the services: compared after a restore."""
    stats = services.stats()
    vectors = services.stores.vectors
    totals = services.index.totals()
    return {
        "memories": stats["memories"],
        "relationships": stats["relationships"],
        "graph_nodes": services.stores.graph.count_nodes_by_label(),
        "vectors": {name: vectors.count(name) for name in (MEMORIES, *CODE_COLLECTIONS)},
        "code_index": {
            "files": totals.total_files,
            "functions": totals.total_functions,
            "classes": totals.total_classes,
            "languages": totals.languages,
        },
        "audit_events": services.stores.audit.count(),
    }


# The figures of store_counts an export-based restore must bring back exactly. The code index
# (code vectors, code graph, index state) is rebuilt by reindexing; the audit log grows by the
# import's own events.
EXPORT_COMPARED = ("memories", "memory_vectors", "memory_nodes")


def export_counts(services: Any) -> dict[str, Any]:
    """store_counts reshaped for a server backup: what an import restores, and what it does not."""
    full = store_counts(services)
    return {
        "memories": full["memories"],
        "memory_vectors": full["vectors"][MEMORIES],
        "memory_nodes": full["graph_nodes"].get(MEMORY_LABEL, 0),
        "relationships": full["relationships"],
        "code_index": full["code_index"],
        "audit_events": full["audit_events"],
    }


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def header(settings: Settings, counts: dict[str, Any]) -> dict[str, Any]:
    out = {
        "kind": kind(settings),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "memory_service_version": __version__,
        "engines": {
            "qdrant-edge": _version("qdrant-edge-py"),
            "ladybug": _version("ladybug"),
            "sqlite": sqlite3.sqlite_version,
            "embedding_model": settings.embedding.model_name,
        },
        "settings": {
            "project": settings.project,
            "backends": backends(settings),
            "embedding_dim": settings.embedding.dim,
            "data_dir": str(settings.resolved_data_dir),
        },
        "counts": counts,
    }
    if out["kind"] == "export":
        out["servers"] = servers(settings)
    return out


def check_settings(manifest: dict[str, Any], settings: Settings) -> None:
    saved = manifest.get("settings", {})
    if saved.get("backends") != backends(settings) or manifest.get("kind", "files") != kind(settings):
        raise ValidationError(
            f"The backup was made with backends {saved.get('backends')} (a {manifest.get('kind', 'files')} "
            f"backup); this configuration uses {backends(settings)}",
            code="VAL_BACKUP_BACKENDS",
            details={"backup": saved.get("backends"), "configured": backends(settings)},
            suggestion="Restore with the backends the backup was made with (set or unset "
            "MEMORY_QDRANT__URL/PATH, MEMORY_GRAPH__URI, MEMORY_REDIS__URL as they were), or move the "
            "memories alone with memory-cli export / import.",
        )
    if saved.get("embedding_dim") != settings.embedding.dim:
        raise ValidationError(
            f"The backup's vectors have {saved.get('embedding_dim')} dimensions; this configuration "
            f"embeds with {settings.embedding.dim}",
            code="VAL_BACKUP_DIMENSION",
            details={"backup": saved.get("embedding_dim"), "configured": settings.embedding.dim},
            suggestion="Restore with the embedding model and dimension the backup was made with.",
        )


def engine_warnings(manifest: dict[str, Any]) -> list[str]:
    saved = manifest.get("engines", {})
    if manifest.get("kind", "files") == "export":  # the engines' files are not restored
        return []
    now = {"qdrant-edge": _version("qdrant-edge-py"), "ladybug": _version("ladybug")}
    return [f"{k} was {saved.get(k)} when backed up, is {v} now" for k, v in now.items() if saved.get(k) != v]
