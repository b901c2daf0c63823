"""Where a data directory's daemon listens, and what it says about itself.

The socket lives in a user-only directory (``$XDG_RUNTIME_DIR`` or the temp dir, then
``memory-service-<uid>``, mode 0700; the socket itself 0600), named by a hash of the resolved
data directory: a Unix socket path must stay under 108 bytes, which a data directory under a
deep project path would not. ``daemon.json`` in the data directory records the daemon's pid,
version and socket, for forwarders (version check) and ``memory-cli daemon status``.

The relay process (relay.py) gets these paths already resolved and only needs the dataclass:
``Settings`` is only a type here, and hashlib (3.7 MB: it loads OpenSSL) and tempfile are imported by
the functions that resolve the paths.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_service.core.errors import ServiceUnavailableError

if TYPE_CHECKING:
    from memory_service.settings import Settings

INFO_FILENAME = "daemon.json"
LOG_FILENAME = "daemon.log"


@dataclass(frozen=True)
class DaemonPaths:
    data_dir: Path
    socket: Path
    spawn_lock: Path  # serialises forwarders that find no daemon, so that one starts it
    info: Path
    log: Path

    @classmethod
    def of(cls, settings: Settings) -> DaemonPaths:
        import hashlib

        data_dir = settings.resolved_data_dir.expanduser().resolve()
        runtime = _runtime_dir(settings)
        name = hashlib.sha256(str(data_dir).encode()).hexdigest()[:24]
        return cls(
            data_dir=data_dir,
            socket=runtime / f"{name}.sock",
            spawn_lock=runtime / f"{name}.spawn.lock",
            info=data_dir / INFO_FILENAME,
            log=data_dir / LOG_FILENAME,
        )

    def read_info(self) -> dict[str, Any] | None:
        """What the daemon wrote when it started listening; None when absent or unreadable."""
        try:
            data = json.loads(self.info.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write_info(self, info: dict[str, Any]) -> None:
        tmp = self.info.with_name(f".{self.info.name}.{os.getpid()}")
        tmp.write_text(json.dumps(info, indent=2) + "\n")
        os.replace(tmp, self.info)

    def remove_info(self, pid: int) -> None:
        """Remove ``daemon.json`` if it is still ours (a successor may have written its own)."""
        info = self.read_info()
        if info is not None and info.get("pid") == pid:
            with contextlib.suppress(OSError):
                self.info.unlink()


def _runtime_dir(settings: Settings) -> Path:
    base = settings.daemon.socket_dir
    if base is None:
        import tempfile

        base = (
            Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / f"memory-service-{os.getuid()}"
        )
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = base.stat()
    except OSError as exc:
        raise _unusable(base, f"it cannot be created ({exc.strerror})") from exc
    if st.st_uid != os.getuid():
        raise _unusable(base, f"it belongs to uid {st.st_uid}, not to you")
    if st.st_mode & 0o077:
        os.chmod(base, 0o700)  # ours: make it user-only again
    return base


def _unusable(path: Path, why: str) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        f"The daemon's socket directory {path} is unusable: {why}",
        code="SVC_DAEMON_SOCKET_DIR",
        details={"socket_dir": str(path)},
        suggestion="Point MEMORY_DAEMON__SOCKET_DIR at a directory only you can write, or run "
        "`memory-service --no-daemon` (one session per data directory).",
    )
