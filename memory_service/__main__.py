"""``python -m memory_service`` / ``memory-service``: the MCP server over stdio."""

from __future__ import annotations

import argparse
import os
import sys

import pydantic

from memory_service import __version__
from memory_service.core.errors import MemoryServiceError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-service",
        description=(
            "Long-term memory MCP server for coding agents, over stdio. Runs embedded by default "
            "(vectors: qdrant-edge, graph: LadybugDB, cache/queue: SQLite) in a per-project data "
            "directory. Settings come from MEMORY_* environment variables (see docs/configuration.md)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"memory-service {__version__}")
    parser.add_argument("--data-dir", help="data directory (default: MEMORY_DATA_DIR or a per-project dir)")
    parser.add_argument("--project-root", help="project root (default: the git root of the cwd)")
    parser.add_argument("--model-path", help="local folder with the ONNX embedding model (offline use)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for flag, env in (
        (args.data_dir, "MEMORY_DATA_DIR"),
        (args.project_root, "MEMORY_PROJECT_ROOT"),
        (args.model_path, "MEMORY_EMBEDDING__MODEL_PATH"),
    ):
        if flag:
            os.environ[env] = flag
    from memory_service.logs import configure_logging
    from memory_service.server import build_server
    from memory_service.settings import Settings

    try:
        settings = Settings()
    except pydantic.ValidationError as exc:  # a bad MEMORY_* variable: one readable line per problem
        for error in exc.errors(include_url=False):
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            print(f"memory-service: invalid setting {where}: {error['msg']}", file=sys.stderr)
        return 2
    configure_logging(settings.server.log_level)
    try:
        build_server(settings).run("stdio")
    except KeyboardInterrupt:
        return 0
    except BaseException as exc:  # report startup failures in one readable line, not a traceback
        err = _service_error(exc)
        if err is None:
            raise
        print(f"memory-service: {err.message}. {err.suggestion}", file=sys.stderr)
        return 1
    return 0


def _service_error(exc: BaseException) -> MemoryServiceError | None:
    """The MemoryServiceError inside an exception (group) raised while starting, if any."""
    if isinstance(exc, MemoryServiceError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _service_error(inner)
        if found is not None:
            return found
    return _service_error(exc.__cause__) if exc.__cause__ else None


if __name__ == "__main__":
    sys.exit(main())
