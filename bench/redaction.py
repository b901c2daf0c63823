"""Secret redaction: recall per kind and precision on the corpus, then throughput.

    .venv/bin/python bench/redaction.py [--mb 1] [--repeat 5]

Corpus: tests/data/secrets_corpus.py (seeded; planted secrets in context, and look-alikes, both
written and drawn at random).
Recall: a planted secret is caught when its exact value no longer appears in the redacted text.
Precision: findings that overlap a planted secret, over all findings in planted texts and
look-alikes; also shown, look-alikes that came back changed and planted texts that lost a word
around the secret.
Previews: tests/data/pii_corpus.py (seeded; planted personal data, and look-alikes) through
sanitize.preview: recall per kind, and look-alikes whose preview is not the text.
Throughput: find_secrets, best of --repeat, on ordinary text (this repository's Python source and
docs, repeated to --mb) as one string and as 2 KB memories, and on text dense with candidates
(the corpus texts, repeated to --mb) as one string and text by text.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_service.core.redaction.sanitize import preview
from memory_service.core.redaction.secrets import find_secrets, redact_text
from tests.data import pii_corpus
from tests.data.secrets_corpus import LOOKALIKES, RANDOM_LOOKALIKES, SECRETS, keeps_context

ROOT = Path(__file__).resolve().parents[1]


def quality() -> None:
    caught: dict[str, list[bool]] = defaultdict(list)
    true_pos = false_pos = damaged = 0
    for planted in SECRETS:
        redacted = redact_text(planted.text)[0]
        caught[planted.kind].append(planted.secret not in redacted)
        damaged += not keeps_context(planted, redacted)
        start = planted.text.index(planted.secret)
        for finding in find_secrets(planted.text):
            hit = finding.start < start + len(planted.secret) and finding.end > start
            true_pos, false_pos = true_pos + hit, false_pos + (not hit)
    changed = sum(redact_text(text)[0] != text for text in LOOKALIKES)
    false_pos += sum(len(find_secrets(text)) for text in LOOKALIKES)
    print(f"corpus: {len(SECRETS)} planted secrets of {len(caught)} kinds, {len(LOOKALIKES)} look-alikes")
    print("recall per kind:")
    for kind in sorted(caught):
        hits = caught[kind]
        print(f"  {kind:18} {sum(hits):3}/{len(hits):<3} {sum(hits) / len(hits):6.1%}")
    found = sum(sum(hits) for hits in caught.values())
    print(f"recall     {found}/{len(SECRETS)} = {found / len(SECRETS):.1%}")
    findings = true_pos + false_pos
    print(f"precision  {true_pos}/{findings} findings = {true_pos / max(1, findings):.1%}")
    print(f"look-alikes changed: {changed}/{len(LOOKALIKES)}; planted texts that lost context: {damaged}")
    drawn = [text for text in RANDOM_LOOKALIKES if find_secrets(text)]
    print(f"random look-alikes changed: {len(drawn)}/{len(RANDOM_LOOKALIKES)}", *drawn[:5], sep="\n  ")


def previews() -> None:
    caught: dict[str, list[bool]] = defaultdict(list)
    for planted in pii_corpus.PLANTED:
        caught[planted.kind].append(planted.secret not in preview(planted.text, 100_000))
    print(f"\npreviews: {len(pii_corpus.PLANTED)} planted, {len(pii_corpus.LOOKALIKES)} look-alikes")
    for kind in sorted(caught):
        hits = caught[kind]
        print(f"  {kind:18} {sum(hits):3}/{len(hits):<3} {sum(hits) / len(hits):6.1%}")
    found = sum(sum(hits) for hits in caught.values())
    print(f"recall     {found}/{len(pii_corpus.PLANTED)} = {found / len(pii_corpus.PLANTED):.1%}")
    changed = [t for t in pii_corpus.LOOKALIKES if preview(t, 100_000) != " ".join(t.split())]
    print(f"look-alikes changed: {len(changed)}/{len(pii_corpus.LOOKALIKES)}", *changed, sep="\n  ")


def best(run: Callable[[], object], repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        timings.append(time.perf_counter() - started)
    return min(timings)


def throughput(args: argparse.Namespace) -> None:
    size = int(args.mb * 1_000_000)
    sources = sorted((ROOT / "memory_service").rglob("*.py")) + sorted((ROOT / "docs").rglob("*.md"))
    ordinary = "".join(p.read_text() for p in sources)
    ordinary = (ordinary * (size // len(ordinary) + 1))[:size]
    pieces = [ordinary[i : i + 2000] for i in range(0, len(ordinary), 2000)]
    texts = [p.text for p in SECRETS] + LOOKALIKES
    dense_texts = texts * (size // sum(map(len, texts)) + 1)
    dense = "\n".join(dense_texts)[:size]
    hundred_kb = ordinary[:100_000]
    print(f"\nthroughput (best of {args.repeat}):")
    seconds = best(lambda: find_secrets(hundred_kb), args.repeat)
    print(f"  100 KB ordinary text           {seconds * 1000:7.2f} ms")
    rows: list[tuple[str, int, Callable[[], object]]] = [
        ("ordinary, one string", len(ordinary), lambda: find_secrets(ordinary)),
        (f"ordinary, {len(pieces)} x 2 KB", len(ordinary), lambda: [find_secrets(t) for t in pieces]),
        ("dense, one string", len(dense), lambda: find_secrets(dense)),
        (
            f"dense, {len(dense_texts)} texts",
            sum(map(len, dense_texts)),
            lambda: [find_secrets(t) for t in dense_texts],
        ),
    ]
    for name, chars, run in rows:
        seconds = best(run, args.repeat)
        rate = chars / 1e6 / seconds
        print(f"  {name:30} {rate:7.1f} MB/s  ({chars / 1e6:.2f} MB in {seconds * 1000:.1f} ms)")
    print(f"  findings in the dense string: {len(find_secrets(dense))}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=1.0, help="size of each throughput text, in MB (chars)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    quality()
    previews()
    throughput(args)


if __name__ == "__main__":
    main()
