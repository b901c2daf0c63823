"""The command line that starts a new interpreter on this very ``memory_service`` package: the
relay (relay.py) replaces the session's process with one, and link.py starts the daemon with one."""

from __future__ import annotations

import os
import sys

import memory_service

# ``python -P -c BOOT ROOT ...``: the new interpreter imports the very package this one runs (ROOT
# holds it), whatever the working directory holds. ``-m`` would put the working directory first on
# sys.path (a session opened in another checkout of this project would run that code); -P keeps it
# off. The relay and the daemon it starts (link.py) are both started this way.
_BOOT = "import sys; root = sys.argv.pop(1); root in sys.path or sys.path.insert(0, root); "


def this_package(code: str, *args: str) -> list[str]:
    """The command line of an interpreter that runs ``code`` (after ``import sys``) with ``args``
    in ``sys.argv[1:]``, importing this very ``memory_service`` package."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(memory_service.__file__)))
    return [sys.executable, "-P", "-c", _BOOT + code, root, *args]
