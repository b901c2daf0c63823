"""``python -m memory_service`` / ``memory-service``: the MCP server.

* no command: MCP over stdio. By default the process forwards to the data directory's daemon,
  starting it when none runs (docs/daemon.md), so that any number of sessions share one store:
  once the settings are checked it replaces itself with the small relay process
  (daemon/relay.py), which never loads the settings model. ``--no-daemon`` (or
  ``MEMORY_DAEMON__ENABLED=false``) opens the stores in this process instead.
* ``serve --http HOST:PORT``: the daemon in the foreground, serving MCP over streamable HTTP too.
* ``daemon``: the daemon in the foreground (what a forwarder starts in the background).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

import pydantic

from memory_service import __version__
from memory_service.core.errors import MemoryServiceError

if TYPE_CHECKING:
    from memory_service.settings import Settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-service",
        description=(
            "Long-term memory MCP server for coding agents. Without a command it speaks MCP over "
            "stdio and forwards to the data directory's daemon, which it starts when none runs, so "
            "that several sessions share one store. Runs embedded by default (vectors: qdrant-edge, "
            "graph: LadybugDB, cache/queue: SQLite) in a per-project data directory. Settings come "
            "from MEMORY_* environment variables (see docs/configuration.md)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"memory-service {__version__}")
    parser.add_argument("--data-dir", help="data directory (default: MEMORY_DATA_DIR or a per-project dir)")
    parser.add_argument("--project-root", help="project root (default: the git root of the cwd)")
    parser.add_argument("--model-path", help="local folder with the ONNX embedding model (offline use)")
    parser.add_argument(
        "--profile",
        help="tool surface: default (seed 001's 27 tools), cortex-find-store (seed 004), cortex-os "
        "(seed 003), memory-interface-v1 (seed 002), or several separated by commas "
        "(MEMORY_SERVER__PROFILE; docs/profiles.md)",
    )
    parser.add_argument(
        "--tool-names",
        choices=("legal", "seed"),
        help="legal (default): memory-find, names every client accepts; seed: the seeds' own "
        "memory.find, which Claude Code refuses (MEMORY_SERVER__TOOL_NAMES)",
    )
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="open the stores in this process instead of forwarding to the shared daemon",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="run the daemon in the foreground, also serving MCP over streamable HTTP",
        description=(
            "Run the data directory's daemon in the foreground: stdio sessions of the same data "
            "directory forward to it, and with --http it serves MCP over streamable HTTP at "
            "http://HOST:PORT/mcp. Any bind that is not loopback needs a bearer token "
            "(MEMORY_SERVER__MCP_TOKEN or --token-file); clients send 'Authorization: Bearer <token>'."
        ),
    )
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP here (e.g. 127.0.0.1:8765)")
    serve.add_argument(
        "--token-file", help="file holding the bearer token (instead of MEMORY_SERVER__MCP_TOKEN)"
    )
    commands.add_parser(
        "daemon",
        help="run the data directory's daemon in the foreground (forwarders start it on their own)",
        description=(
            "Run the daemon that owns the data directory's stores in the foreground. stdio sessions "
            "start it in the background when none runs; it exits after MEMORY_DAEMON__IDLE_TIMEOUT_S "
            "seconds with no client connected and no job running."
        ),
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for flag, env in (
        (args.data_dir, "MEMORY_DATA_DIR"),
        (args.project_root, "MEMORY_PROJECT_ROOT"),
        (args.model_path, "MEMORY_EMBEDDING__MODEL_PATH"),
        (args.profile, "MEMORY_SERVER__PROFILE"),
        (args.tool_names, "MEMORY_SERVER__TOOL_NAMES"),
    ):
        if flag:
            os.environ[env] = flag
    from memory_service.logs import configure_logging
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
        return _run(args, settings)
    except KeyboardInterrupt:
        return 0
    except BaseException as exc:  # report startup failures in one readable line, not a traceback
        err = _service_error(exc)
        if err is None:
            raise
        print(f"memory-service: {err.message}. {err.suggestion}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from memory_service.settings import split_profiles

    if len(split_profiles(settings.server.profile)) > 1:
        # Profiles that clash: say so now. (One profile cannot clash, and settings checked its
        # name: a session then starts its relay without importing the tools, which is quicker.)
        from memory_service.tools.profiles import tools_for

        tools_for(settings.server.profile, settings.server.tool_names)
    if args.command == "serve":
        from memory_service.transport.http import check_port, parse_bind, read_token

        http = parse_bind(args.http) if args.http else None
        token = read_token(settings, args.token_file)
        if http is not None:  # a taken port is refused now, before the stores open and the model loads
            check_port(*http)
        from memory_service.daemon.service import run_daemon

        return run_daemon(settings, http=http, token=token, idle_exit=False)
    if args.command == "daemon":
        from memory_service.daemon.service import run_daemon

        return run_daemon(settings)
    if settings.daemon.enabled and not args.no_daemon:
        from memory_service.daemon.relay import become_relay

        become_relay(settings)  # this process becomes the small relay to the daemon (same pid)
    from memory_service.daemon.connection import serve_stdio
    from memory_service.server import build_server

    serve_stdio(build_server(settings))
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
