"""Generate clean, self-contained JSON schemas from pydantic models.

pydantic's output carries titles, ``$defs``/``$ref`` indirection and ``anyOf [X, null]`` for
optional fields; seed 001 writes plain JSON Schema. This flattens one into the other so that the
published ``inputSchema``/``outputSchema`` read like the spec.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel


def model_schema(model: type[BaseModel], *, mode: str = "validation") -> dict[str, Any]:
    """Input schemas drop ``null`` from optional fields (leave them out instead); output schemas
    say ``"type": [T, "null"]`` because a response may carry an explicit null."""
    raw = model.model_json_schema(mode=mode)  # type: ignore[arg-type]
    defs = raw.pop("$defs", {})
    return _clean(raw, defs, nullable=mode == "serialization")


def _clean(node: Any, defs: dict[str, Any], nullable: bool = False) -> Any:
    if isinstance(node, list):
        return [_clean(n, defs, nullable) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]])
        target.pop("description", None)  # a class docstring, written for developers, not callers
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs, nullable)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties":
            out[key] = {name: _clean(prop, defs, nullable) for name, prop in value.items()}
        else:
            out[key] = _clean(value, defs, nullable)
    if "anyOf" in out:
        non_null = [s for s in out["anyOf"] if s.get("type") != "null"]
        if len(non_null) == 1 and len(non_null) < len(out["anyOf"]):
            rest = {k: v for k, v in out.items() if k != "anyOf"}
            out = {**non_null[0], **rest}
            if nullable and isinstance(out.get("type"), str):
                out["type"] = [out["type"], "null"]
    if out.get("default", 0) is None:
        del out["default"]
    if out.get("additionalProperties") is True:
        del out["additionalProperties"]
    if out.get("type") == "object" and out.get("additionalProperties") == {} and not out.get("properties"):
        del out["additionalProperties"]  # dict[str, Any] → {"type": "object"}
    if out.get("items") == {}:
        del out["items"]
    return out
