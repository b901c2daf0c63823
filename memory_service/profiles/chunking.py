"""Section chunking (seed 004 FR-031, A-011): a long section body split at markdown headings
(never inside a code fence), too-big pieces at paragraphs, lines, then characters, and small
pieces merged, so that every chunk is 1-3 KB. Pure text functions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- section chunking

CHUNK_MAX_BYTES = 3 * 1024
CHUNK_MIN_BYTES = 1024
MAX_SECTION_CHARS = 300_000  # about 150 chunks: a larger document is sent as several sections
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


@dataclass
class Chunk:
    text: str
    path: list[str] = field(default_factory=list)  # the headings it sits under, outermost first


def size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def chunk_section(body: str, *, markdown: bool) -> list[Chunk]:
    """A section body in chunks (seed 004 FR-031, A-011): whole when at most 3 KB; else split at
    its markdown headings, pieces over 3 KB split at paragraphs (then lines, then characters),
    and pieces under 1 KB merged with the next where the two fit in 3 KB."""
    text = body.strip()
    if size(text) <= CHUNK_MAX_BYTES:
        return [Chunk(text)]
    blocks = split_headings(text) if markdown else [Chunk(text)]
    pieces = [piece for block in blocks for piece in split_size(block)]
    return merge_small(pieces)


def split_headings(text: str) -> list[Chunk]:
    """Blocks that each start at an ATX heading (``#`` .. ``######``, not inside a fenced code
    block), with the path of headings above them; text before the first heading is a block too."""
    blocks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []
    path: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opener = _FENCE.match(line)
        if opener:
            mark = opener.group(1)[0]
            fence = None if fence == mark else (fence or mark)
        heading = _HEADING.match(line) if fence is None and not opener else None
        if heading:
            if "".join(lines).strip():
                blocks.append(Chunk("\n".join(lines).strip(), path))
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading.group(2).strip()))
            path = [title for _, title in stack]
            lines = []
        lines.append(line)
    if "".join(lines).strip():
        blocks.append(Chunk("\n".join(lines).strip(), path))
    return blocks


def split_size(block: Chunk) -> list[Chunk]:
    """A block over 3 KB as pieces of about equal size, cut at paragraph, line or (for one huge
    line) character boundaries, none over 3 KB."""
    total = size(block.text)
    if total <= CHUNK_MAX_BYTES:
        return [block]
    units = list(_units(block.text))
    target = total / -(-total // CHUNK_MAX_BYTES)  # even pieces: no tiny last one
    pieces: list[Chunk] = []
    current = ""
    for unit in units:
        if current and (size(current) >= target or size(current + unit) > CHUNK_MAX_BYTES):
            pieces.append(Chunk(current.strip(), block.path))
            current = ""
        current += unit
    if current.strip():
        pieces.append(Chunk(current.strip(), block.path))
    return [p for p in pieces if p.text]


def _units(text: str) -> Iterator[str]:
    """Paragraphs (with their trailing blank lines); a paragraph over 3 KB as lines; a line over
    3 KB as runs of characters. Concatenated, the units are the text."""
    for paragraph in re.split(r"(?<=\n\n)", text):
        if size(paragraph) <= CHUNK_MAX_BYTES:
            yield paragraph
            continue
        for line in paragraph.splitlines(keepends=True):
            if size(line) <= CHUNK_MAX_BYTES:
                yield line
            else:
                yield from _runs(line)


def _runs(line: str) -> Iterator[str]:
    """A line in runs of about equal size, at most 3 KB of UTF-8 each, cut between characters (at a
    space when one is near)."""
    total = size(line)
    budget = -(-total // -(-total // CHUNK_MAX_BYTES))  # even runs: no tiny last one
    start = 0
    while start < len(line):
        end = start
        used = 0
        while end < len(line) and used + size(line[end]) <= budget:
            used += size(line[end])
            end += 1
        if end < len(line):
            space = line.rfind(" ", start, end)
            if space > start + (end - start) // 2:
                end = space + 1
        yield line[start:end]
        start = end


def merge_small(pieces: list[Chunk]) -> list[Chunk]:
    """Pieces under 1 KB joined with the next piece (or the last with the one before) when the
    two fit in 3 KB; a merged chunk sits under the headings both share."""
    out: list[Chunk] = []
    for piece in pieces:
        last = out[-1] if out else None
        if last is not None and size(last.text) < CHUNK_MIN_BYTES and _fits(last, piece):
            out[-1] = _join(last, piece)
        else:
            out.append(piece)
    if len(out) > 1 and size(out[-1].text) < CHUNK_MIN_BYTES and _fits(out[-2], out[-1]):
        out[-2:] = [_join(out[-2], out[-1])]
    return out


def _fits(a: Chunk, b: Chunk) -> bool:
    return size(a.text) + 2 + size(b.text) <= CHUNK_MAX_BYTES


def _join(a: Chunk, b: Chunk) -> Chunk:
    shared = []
    for x, y in zip(a.path, b.path, strict=False):
        if x != y:
            break
        shared.append(x)
    return Chunk(f"{a.text}\n\n{b.text}", shared)
