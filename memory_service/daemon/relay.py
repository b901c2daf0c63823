"""The relay process: what a stdio session's ``memory-service`` becomes once its settings are checked.

Every Claude Code session keeps one running for as long as it lasts, so it must cost little. In a
Python process that has read the settings, most of the memory is the settings model itself
(pydantic, pydantic-settings, the model's schema: 24 of the forwarder's 37.5 MB). So
``memory-service`` validates every MEMORY_* variable with that model as for any command (a bad one
is reported, exit 2), resolves the few values the forwarder needs (:class:`Handover`), then
replaces itself with a fresh interpreter running :func:`main` (:func:`become_relay`). ``execv``
keeps the pid, stdin, stdout and stderr, so the MCP client talks to the same process; the
settings model is gone with the old image. The relay imports the forwarder and what it needs,
none of which imports pydantic, anyio or ``memory_service.settings``
(tests/unit/daemon/test_relay.py): 15.9 MB resident while relaying.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from memory_service.daemon.boot import this_package
from memory_service.daemon.paths import DaemonPaths

if TYPE_CHECKING:
    from memory_service.settings import Settings

_COMM = Path("/proc/self/comm")  # the name ps and top show: the console script's, not "python3"


@dataclass(frozen=True)
class Handover:
    """What the relay needs, resolved from the checked settings by the process it replaces."""

    paths: DaemonPaths
    start_timeout_s: float
    profile: str
    tool_names: str
    log_level: str
    name: str  # the process name before the exec ("" when unknown)

    @classmethod
    def of(cls, settings: Settings) -> Handover:
        name = ""
        with contextlib.suppress(OSError):
            name = _COMM.read_text().strip()
        return cls(
            paths=DaemonPaths.of(settings),
            start_timeout_s=settings.daemon.start_timeout_s,
            profile=settings.server.profile,
            tool_names=settings.server.tool_names,
            log_level=settings.server.log_level,
            name=name,
        )

    def to_json(self) -> str:
        data = asdict(self)
        data["paths"] = {field: str(path) for field, path in data["paths"].items()}
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Handover:
        data = json.loads(text)
        paths = DaemonPaths(**{field: Path(path) for field, path in data.pop("paths").items()})
        return cls(paths=paths, **data)


def become_relay(settings: Settings) -> NoReturn:
    """Replace this process with the relay (same pid and standard streams). Raises what resolving
    the daemon's paths raises (an unusable socket directory) before replacing anything."""
    handover = Handover.of(settings)
    command = this_package(
        "from memory_service.daemon.relay import main; sys.exit(main(sys.argv[1:]))", handover.to_json()
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)


def main(argv: list[str]) -> int:
    """Relay stdio to the daemon with the handed-over values; the forwarder's exit code."""
    from memory_service.daemon.forwarder import Forwarder
    from memory_service.daemon.hello import profile_line
    from memory_service.logs import configure_logging

    (text,) = argv
    handover = Handover.from_json(text)
    if handover.name:
        with contextlib.suppress(OSError):
            _COMM.write_text(handover.name)
    configure_logging(handover.log_level)
    forwarder = Forwarder(
        handover.paths,
        profile=profile_line(handover.profile, handover.tool_names),
        start_timeout=handover.start_timeout_s,
    )
    try:
        return forwarder.run()
    except KeyboardInterrupt:
        return 0
