"""Server logging: plain one-line records on stderr, bounded in size whatever they quote.

stdout is the MCP channel, so logs go to stderr. The SDK would install a rich handler (wrapped
panels, multi-line tracebacks); a log collector or a terminal reads one record per line better.
A traceback stays in the record, its lines joined with `` | ``.
"""

from __future__ import annotations

import logging
import sys

MAX_RECORD_CHARS = 4000


class OneLineFormatter(logging.Formatter):
    """``time LEVEL logger: message`` on one line, cut to :data:`MAX_RECORD_CHARS`."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        text = " | ".join(line for line in text.splitlines() if line.strip())
        if len(text) > MAX_RECORD_CHARS:
            text = f"{text[:MAX_RECORD_CHARS]}… ({len(text)} characters)"
        return text


def configure_logging(level: str = "INFO") -> None:
    """Install the one-line stderr handler on the root logger (before the SDK would add its own)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
