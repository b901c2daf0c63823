"""The validating pass of an import: every line of the file is checked before anything is written.

The pass copies the lines it accepted into a private file in the data directory; the import then
reads that copy, so a file changed or removed while it is being imported cannot leave half of
it written. Memory use stays bounded by one line, whatever the file's size.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError as PydanticError

from memory_service.core.portability.format import (
    FORMAT,
    FORMAT_VERSION,
    FileProblems,
    Header,
    MemoryLine,
    Trailer,
    ValidatedFile,
    parse_line,
    problem_text,
    version_error,
)

MAX_LINE_BYTES = 64 << 20  # a memory is at most 100k characters; metadata and a vector add little


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """(number from 1, line as written with its newline, whether it fit in MAX_LINE_BYTES)."""
    number = 0
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield number, b"", False
            continue
        yield number, raw, True


def validate_file(source: Path, copy_dir: Path, name: str) -> ValidatedFile:
    """Check the whole file; raise one error listing the bad lines, or return what it holds.

    Raises:
        ValidationError: VAL_IMPORT_FILE (bad lines, listed) or VAL_IMPORT_VERSION.
        OSError: the file could not be read, or the copy not written.
    """
    copy_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=copy_dir, prefix=".import-", suffix=".jsonl")
    try:
        with source.open("rb") as src, os.fdopen(fd, "wb") as copy:
            found = _Pass(name, copy).run(src)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return ValidatedFile(**found, copy_path=Path(tmp))


class _Pass:
    def __init__(self, name: str, copy: IO[bytes]) -> None:
        self.name = name
        self.copy = copy
        self.problems = FileProblems(name)
        self.digest = hashlib.sha256()
        self.header: Header | None = None
        self.trailer: tuple[int, Trailer] | None = None
        self.seen: dict[str, int] = {}
        self.relationships = 0
        self.votes = 0

    def run(self, src: IO[bytes]) -> dict[str, Any]:
        last = 0
        for number, raw, fits in _lines(src):
            last = number
            if not fits:
                self.problems.add(number, f"longer than {MAX_LINE_BYTES >> 20} MB")
            elif self.trailer is not None:
                if raw.strip():
                    self.problems.add(number, 'more data after the trailer line ({"end": true, ...})')
            else:
                self._line(number, raw)
        if last == 0:
            self.problems.add(1, "the file is empty (an export starts with its header line)")
        elif self.trailer is None:
            self.problems.add(
                last, f"the file ends without its trailer line ({{\"end\": true, ...}}): it was cut short "
                f"after line {last}",
            )  # fmt: skip
        else:
            self._check_trailer(*self.trailer)
        self.problems.raise_if_any()
        assert self.header is not None
        return {
            "header": self.header,
            "ids": list(self.seen),
            "lines": len(self.seen),
            "relationships": self.relationships,
            "votes": self.votes,
        }

    def _line(self, number: int, raw: bytes) -> None:
        try:
            value = parse_line(raw)
        except ValueError as exc:
            self.problems.add(number, str(exc))
            self.digest.update(raw)
            return
        if number == 1:
            self._header(value)
        elif isinstance(value, dict) and "end" in value:
            try:
                self.trailer = (number, Trailer.model_validate(value))
            except PydanticError as exc:
                self.problems.add(number, f"bad trailer: {problem_text(exc)}")
            return  # the trailer is not part of the checksum
        else:
            self._memory(number, value, raw)
        self.digest.update(raw)

    def _header(self, value: Any) -> None:
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            self.problems.add(
                1, f"not an export header: the first line must be {{\"format\": \"{FORMAT}\", "
                "\"format_version\": ..., ...}} (was the file written by export_memory?)",
            )  # fmt: skip
            return
        version = value.get("format_version")
        if isinstance(version, int) and not isinstance(version, bool) and version != FORMAT_VERSION:
            raise version_error(self.name, version)
        try:
            self.header = Header.model_validate(value)
        except PydanticError as exc:
            self.problems.add(1, f"bad header: {problem_text(exc)}")

    def _memory(self, number: int, value: Any, raw: bytes) -> None:
        if not isinstance(value, dict) or "memory" not in value:
            self.problems.add(number, 'not a memory line (an object with a "memory" record)')
            return
        try:
            line = MemoryLine.model_validate(value)
            line.check(self.header.dim if self.header else len(line.embedding or ()))
        except (PydanticError, ValueError) as exc:
            self.problems.add(number, problem_text(exc))
            return
        mid = line.memory.id
        if _canonical_uuid(mid) != mid:
            self.problems.add(number, f"memory.id '{mid[:80]}' is not a UUID in lowercase, hyphenated form")
            return
        if mid in self.seen:
            self.problems.add(number, f"memory {mid} appears twice (first on line {self.seen[mid]})")
            return
        self.seen[mid] = number
        self.relationships += len(line.relationships)
        self.votes += len(line.votes)
        self.copy.write(raw if raw.endswith(b"\n") else raw + b"\n")

    def _check_trailer(self, number: int, trailer: Trailer) -> None:
        counts: dict[str, tuple[int | None, int]] = {"count": (trailer.count, len(self.seen))}
        counts["relationships"] = (trailer.relationships, self.relationships)
        counts["votes"] = (trailer.votes, self.votes)
        for key, (said, held) in counts.items():
            if said is not None and said != held and not self.problems.total:
                self.problems.add(number, f"the trailer's {key} is {said} but the file holds {held}")
        wrong_sum = trailer.sha256 is not None and trailer.sha256 != self.digest.hexdigest()
        if wrong_sum and not self.problems.total:
            self.problems.add(
                number, "the trailer's sha256 does not match the lines before it: the file was changed "
                "or damaged after it was exported",
            )  # fmt: skip


def _canonical_uuid(value: str) -> str | None:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None
