"""How ``memory-cli`` finds the HTTP side server of the process that owns a data directory.

The server writes ``http.json`` (its pid and URL) into the data directory once it owns it, and
removes it on a clean exit. A server killed with SIGKILL leaves the file behind, so a reader
trusts it only when the data directory's owner lock is held by that very pid *and* the URL
answers ``/health/live`` naming the same pid and directory (a port reused by another process,
or another server's, is not ours).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from memory_service.stores.owner_lock import read_owner

HTTP_FILENAME = "http.json"


def base_url(host: str, port: int) -> str:
    """Where to connect: a wildcard bind is reached on loopback; IPv6 literals get brackets."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def publish(data_dir: Path, url: str) -> None:
    """Record our URL for this data directory (atomically: a reader never sees half a file)."""
    path = Path(data_dir) / HTTP_FILENAME
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"pid": os.getpid(), "url": url, "data_dir": str(data_dir)}))
    os.replace(tmp, path)


def withdraw(data_dir: Path) -> None:
    """Remove the record if it is ours (a later server may have replaced it)."""
    path = Path(data_dir) / HTTP_FILENAME
    info = _read(path)
    if info is not None and info.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _read(path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def get_json(url: str, timeout: float) -> tuple[int, dict[str, Any]]:
    """GET a JSON endpoint: (status, body), also for 503 answers, which carry a body too.

    Raises:
        OSError: nothing answers (refused, timed out) or the answer is not JSON.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            raise OSError(f"{url} answered {exc.code} without JSON") from None
    except ValueError as exc:
        raise OSError(f"{url} did not answer JSON: {exc}") from None


def running_server(data_dir: Path, timeout: float = 2.0) -> str | None:
    """The URL of the live server that owns ``data_dir``, or None (no owner, no HTTP, stale file)."""
    data_dir = Path(data_dir)
    info = _read(data_dir / HTTP_FILENAME)
    if info is None or not isinstance(info.get("url"), str):
        return None
    owner = read_owner(data_dir)
    if owner is None or owner != info.get("pid"):
        return None  # the writer died (its lock went with it) or another process owns it now
    try:
        status, live = get_json(f"{info['url']}/health/live", timeout)
    except OSError:
        return None
    if status != 200 or live.get("pid") != owner or not _same_dir(live.get("data_dir"), data_dir):
        return None
    return str(info["url"])


def _same_dir(reported: object, data_dir: Path) -> bool:
    return isinstance(reported, str) and Path(reported).resolve() == data_dir.resolve()


def ask_server(
    data_dir: Path,
    path: str,
    *,
    accept: tuple[int, ...] = (200,),
    timeout: float = 120.0,
    wait_model: float = 0.0,
) -> Any:
    """``path``'s JSON from the server owning ``data_dir``; None when no live server answers there.

    ``accept``: the statuses whose body is the answer (``/health/ready``'s 503 is one).

    ``wait_model``: while the model is still loading (the embedding component ``degraded``), ask
    again for up to this long, as ``memory-cli health`` waits for a model it loads itself.

    Raises:
        OSError: the server was found but this request failed (it may be busy or stopping).
    """
    url = running_server(data_dir)
    if url is None:
        return None
    deadline = time.monotonic() + wait_model
    while True:
        status, body = get_json(f"{url}{path}", timeout)
        if status not in accept:
            raise OSError(f"{url}{path} answered {status}: {body.get('error', body)}")
        loading = any(
            c.get("component") == "embedding" and c.get("state") == "degraded"
            for c in body.get("components", [])
        )
        if not loading or time.monotonic() >= deadline:
            return body
        time.sleep(0.5)
