"""Operator requests on the daemon's socket: work memory-cli asks of the daemon itself.

A connection whose first line is a JSON-RPC request for an operator method (``memory-service/
backup``, hello.py) is answered here instead of by an MCP session. Such work is not a tool: no
agent sees it in tools/list, the HTTP transport never reaches it, and only the socket's user may
connect (paths.py). While the work runs in a worker thread, its progress goes to the client as
``notifications/progress`` (``{message, progress, total}``); the answer is the result, or a
JSON-RPC error whose ``data`` is the seed-001 error envelope. A client that goes away stops the
work at its next progress report (a backup then removes its partial copy).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteStream

from memory_service.core.errors import InternalError, MemoryServiceError, ValidationError
from memory_service.daemon.connection import GONE
from memory_service.daemon.hello import BACKUP_METHOD

logger = logging.getLogger(__name__)
SERVER_ERROR = -32000


class ClientGone(Exception):
    """The client that asked closed its connection: the work stops."""


def operator_request(line: bytes) -> dict[str, Any] | None:
    """The request a connection's first line makes, when it is an operator request."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == BACKUP_METHOD and "id" in message:
        return message
    return None


class Operator:
    """Answers operator requests with the daemon's opened services."""

    def __init__(self, services: Any) -> None:
        self._services = services

    async def answer(self, line: bytes, stream: ByteStream) -> bool:
        """Answer ``line`` when it is an operator request (True); False leaves it to MCP."""
        request = operator_request(line)
        if request is None:
            return False

        def progress(message: str, done: int, total: int) -> None:
            params = {"message": message, "progress": done, "total": total}
            note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
            try:
                anyio.from_thread.run(stream.send, json.dumps(note).encode() + b"\n")
            except GONE as exc:
                raise ClientGone from exc

        try:
            result = await anyio.to_thread.run_sync(self._backup, request.get("params"), progress)
            reply: dict[str, Any] = {"result": result}
        except ClientGone:
            logger.warning("the client asking for a backup went away: backup abandoned")
            return True
        except MemoryServiceError as exc:
            reply = {"error": {"code": SERVER_ERROR, "message": exc.message, "data": exc.to_envelope()}}
        except Exception:
            logger.exception("an operator request failed")
            error = InternalError(
                "The backup failed unexpectedly",
                suggestion="This is a bug: see daemon.log in the data directory, and report it.",
            )
            reply = {"error": {"code": SERVER_ERROR, "message": error.message, "data": error.to_envelope()}}
        answer = {"jsonrpc": "2.0", "id": request["id"], **reply}
        try:
            await stream.send(json.dumps(answer).encode() + b"\n")
        except GONE:
            logger.warning("the client asking for a backup went away before its answer")
        return True

    def _backup(self, params: Any, progress: Any) -> dict[str, Any]:
        from memory_service.backup.online import backup_serving

        path = params.get("path") if isinstance(params, dict) else None
        if not isinstance(path, str) or not Path(path).is_absolute():
            raise ValidationError(
                "A backup request needs params.path, an absolute path",
                code="VAL_BACKUP_DEST",
                details={"path": path},
                suggestion="Run memory-cli backup PATH.",
            )
        return backup_serving(self._services, Path(path), progress)
