"""How a memory reads back as a memory.find hit (seed 004): its snippet, its title within its
document, what it cites, and a search suggestion in memory.find's words."""

from __future__ import annotations

from typing import Any

from memory_service.core.limits import clip_text
from memory_service.core.search.schemas import Suggestion
from memory_service.core.search.scoring import terms
from memory_service.profiles.find_store.items import inline

SNIPPET_CHARS = 300
STRATEGY = {  # a route in the seed's words (FR-023)
    "change_first": "logs-first (issues, PRs, changes)",
    "code_first": "runbooks and sections (files, symbols, stack traces)",
    "design_first": "specs, ADRs and examples (implement, design, why)",
    "general": "general (dense + lexical)",
}


def snippet(content: str, query: str, limit: int = SNIPPET_CHARS) -> str:
    """At most ``limit`` characters: the start of the content, or the text around the first query
    term when that term appears further in."""
    text = " ".join(content.split())
    if len(text) <= limit:
        return text
    lowered = text.lower()
    spots = [i for i in (lowered.find(t) for t in terms(query)) if i >= 0]
    first = min(spots, default=0)
    if first + 40 <= limit:
        return text[: limit - 1].rstrip() + "…"
    start = text.rfind(" ", 0, max(first - limit // 4, 0)) + 1
    body = text[start : start + limit - 2].rstrip()
    return "…" + body + ("…" if start + limit - 2 < len(text) else "")


def hit_title(record_title: str | None, metadata: dict[str, Any]) -> str | None:
    """A chunk's title says where in its document it sits: ``Document > Heading > Subheading``."""
    given = metadata.get("heading_path")  # a list the chunker wrote, or whatever another tool kept
    path = [p for p in given if isinstance(p, str)] if isinstance(given, list) else []
    if not path or not record_title:
        return record_title
    if path[0].strip().lower() == record_title.strip().lower():
        path = path[1:]
    return " > ".join([record_title, *path])


def citations(metadata: dict[str, Any]) -> list[str]:
    """What an item cites, as short strings: its source, PRs, commits, issues and links."""
    out: list[str] = []
    source = metadata.get("source")
    if isinstance(source, str) and source.strip():
        out.append(source.strip())
    elif isinstance(source, dict):
        ref = next((source[k] for k in ("url", "uri", "ref", "path") if isinstance(source.get(k), str)), None)
        out.append(ref or "; ".join(f"{k}={inline(v)}" for k, v in source.items() if v not in (None, "")))
    repo = metadata.get("repo")
    for key in ("pr_id", "pr", "pr_number"):
        if metadata.get(key) not in (None, ""):
            out.append(f"{repo}#{metadata[key]}" if isinstance(repo, str) and repo else f"PR {metadata[key]}")
    for key in ("pr_ids", "linked_prs", "linked_pr_ids"):
        out.extend(f"PR {p}" for p in _strings(metadata.get(key)))
    for key in ("commit", "commit_sha"):
        if isinstance(metadata.get(key), str) and metadata[key]:
            out.append(f"commit {metadata[key]}")
    if metadata.get("tracker") and metadata.get("external_id"):
        out.append(f"{metadata['tracker']}:{metadata['external_id']}")
    for key in ("url", "supersedes"):
        if isinstance(metadata.get(key), str) and metadata[key]:
            out.append(metadata[key] if key == "url" else f"supersedes {metadata[key]}")
    for key in ("evidence", "references", "links", "citations"):
        out.extend(_strings(metadata.get(key)))
    return [clip_text(c, 200) for c in dict.fromkeys(c for c in out if c)][:10]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str | int) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) if isinstance(v, str | int) else inline(v) for v in value if v not in (None, "")]
    return []


def suggestion_text(suggestion: Suggestion) -> str:
    """A search suggestion in memory.find's words (types, time_range, mode)."""
    args = suggestion.arguments or {}
    if suggestion.kind == "broaden_types":
        return "Drop the 'types' filter: other kinds may answer this"
    if suggestion.kind == "broaden_time":
        return "Drop the 'time_range' filter: older or newer items may answer this"
    if suggestion.kind == "deep_mode":
        return "Try mode 'deep': it adds fuzzy term matching and linked items"
    if suggestion.kind == "related_terms" and args.get("query"):
        return f"{suggestion.message}; try the query '{args['query']}'"
    if suggestion.kind == "rephrase":
        return "Nothing matched: describe the topic in other words, or store the knowledge with memory.store"
    return suggestion.message
