"""Whether a published JSON schema holds a seed's: shared by the seed-schema tests."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def schema_problems(
    seed: Any, ours: Any, path: str, ignored: Collection[str] = ("description",)
) -> list[str]:
    """Every key/value the seed gives is in ours; required lists are equal; alternatives (a list
    of schemas, e.g. oneOf) pair up one by one. Ours may add optional fields, types and bounds."""
    problems: list[str] = []
    if isinstance(seed, dict):
        if not isinstance(ours, dict):
            return [f"{path}: expected an object, found {ours!r}"]
        for key, value in seed.items():
            if key in ignored:
                continue
            if key not in ours:
                problems.append(f"{path}.{key}: missing (seed has {value!r})")
            elif key == "required":
                if set(value) != set(ours[key]):
                    problems.append(f"{path}.required: seed {sorted(value)} != ours {sorted(ours[key])}")
            else:
                problems.extend(schema_problems(value, ours[key], f"{path}.{key}", ignored))
    elif isinstance(seed, list) and seed and all(isinstance(s, dict) for s in seed):
        if not isinstance(ours, list) or len(ours) != len(seed):
            return [f"{path}: seed has {len(seed)} alternatives, ours {ours!r}"]
        for i, (s, o) in enumerate(zip(seed, ours, strict=True)):
            problems.extend(schema_problems(s, o, f"{path}[{i}]", ignored))
    elif seed != ours:
        problems.append(f"{path}: seed {seed!r} != ours {ours!r}")
    return problems
