"""Where the embedding model's weights can come from, decided without waiting on the network.

fastembed's own download retries a failed request with sleeps of 3, 9 and 27 s; on a machine
without network that cost ~40 s before every first write. These helpers settle it first: the
cache folder fastembed reads, the offline flags it honours, and one short request to the hub.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The one request that decides whether a download can work; fastembed itself would retry for ~40 s.
HUB_PROBE_TIMEOUT_SECONDS = 5.0


class ModelUnobtainableError(Exception):
    """No model folder, nothing in fastembed's cache, and no way to download it now: expected on an
    offline machine, so it is reported with one warning rather than as a failure."""


def fastembed_cache_dir() -> Path:
    """Where fastembed keeps downloaded models: its own rule, passed to it explicitly so that what
    we report is where it looked."""
    return Path(os.environ.get("FASTEMBED_CACHE_PATH") or Path(tempfile.gettempdir()) / "fastembed_cache")


def offline_flag() -> str | None:
    """The variable forbidding downloads, if set (read as huggingface_hub and fastembed read it)."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip().upper() in {"1", "TRUE", "YES", "ON"}:
            return name
    return None


@contextmanager
def fastembed_muted() -> Iterator[None]:
    """Silence fastembed's own (loguru) error lines while it looks in its cache: a miss is expected
    there, and the outcome is reported once, by us."""
    from loguru import logger as fastembed_logger

    fastembed_logger.disable("fastembed")
    try:
        yield
    finally:
        fastembed_logger.enable("fastembed")


def probe_hub(repo: str, missing: str) -> None:
    """Ask the hub about the model once, with a short timeout, before fastembed's retrying download.

    ``model_info`` is the request fastembed's download starts with, so when it fails, so would the
    download (after ~40 s of retries).

    Raises:
        ModelUnobtainableError: the hub (``HF_ENDPOINT``) cannot be reached or refuses the model.
    """
    import httpx
    from huggingface_hub import constants, model_info

    try:
        model_info(repo, timeout=HUB_PROBE_TIMEOUT_SECONDS)
    except (OSError, httpx.HTTPError) as exc:  # hub errors are OSError (0.x) or httpx errors (1.x)
        raise ModelUnobtainableError(
            f"{missing}, and it cannot be downloaded from {constants.ENDPOINT} ({type(exc).__name__}: {exc})"
        ) from exc
