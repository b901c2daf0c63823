"""Loading the embedding model and embedding write nothing under the user's home: ONNX Runtime's
telemetry (a device id and an event database in ~/.cache/Microsoft/DeveloperTools) stays off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, require_model

SCRIPT = """
import sys
from memory_service.embeddings.fastembed_embedder import FastEmbedder
from memory_service.settings import EmbeddingSettings

embedder = FastEmbedder(EmbeddingSettings(model_path=sys.argv[1], load_timeout_seconds=120))
embedder.start()
assert embedder.wait_ready(120), embedder.health()
vectors = embedder.embed_documents(["Nothing is written outside the data directory."])
assert len(vectors) == 1 and len(vectors[0]) == 384
print("embedded")
"""


def test_the_model_writes_nothing_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "ORT_", "XDG_"))}
    env.update(
        {"HOME": str(home), "PYTHONPATH": str(REPO), "FASTEMBED_CACHE_PATH": str(tmp_path / "fastembed")}
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(require_model())],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "embedded" in done.stdout, done.stdout + done.stderr
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
