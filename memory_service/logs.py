"""Server logging: plain one-line records on stderr, bounded in size whatever they quote.

stdout is the MCP channel, so logs go to stderr. The SDK would install a rich handler (wrapped
panels, multi-line tracebacks); a log collector or a terminal reads one record per line better.
A traceback stays in the record, its lines joined with `` | ``. Secrets are masked first
(:class:`RedactingFilter`): a log line quotes whatever it is handed (a DSN in a connection error, a
request body), and log files are kept and shipped.
"""

from __future__ import annotations

import logging
import sys

from memory_service.core.redaction.secrets import redact_text

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


class RedactingFilter(logging.Filter):
    """Masks secrets in a record's message, traceback and stack before a handler formats it.

    On the handler rather than a logger, so records from every logger (the SDK's, libraries')
    are covered; before the formatter, so a secret is never half-kept by the length cut.
    """

    _tracebacks = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # logging never raises into the caller: the handler reports the bad record
            return True
        masked, kinds = redact_text(message)
        if kinds:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._tracebacks.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)[0]
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)[0]
        return True


def configure_logging(level: str = "INFO") -> None:
    """Install the one-line stderr handler on the root logger (before the SDK would add its own)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
