"""Hypothesis strategies built from a tool's published inputSchema, and the checks on what comes back.

The strategies know nothing of MCP: ``valid_arguments`` walks the schema (objects, arrays, enums)
and hands each leaf to ``hypothesis_jsonschema.from_schema`` with its strings kept short;
``hostile_arguments`` starts from a valid-ish call (or ``{}``) and breaks it: a property of the
wrong JSON type, an unknown property, a required one dropped, a megabyte or control-laden string,
a lone surrogate, NaN, 2**64 or 10**400, nesting 200 levels deep. ``check_result`` is what every
answer must look like; ``Call`` prints a failing call as Python source that rebuilds it.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from mcp.types import CallToolResult

T = TypeVar("T")

Strategy = st.SearchStrategy[Any]

SHORT_STRING = 60  # maxLength given to generated valid-ish strings: small examples, fast calls
ENVELOPE_LIMIT = 4096  # an error repeats at most a prefix of what was sent (tests/e2e/test_hostile_input.py)
# What a refusal may be while every store is up (the fixture checks health): SERVICE_UNAVAILABLE
# would tell the agent to retry later what will fail again, and INTERNAL_ERROR is the registry's
# catch-all for an exception the tool did not expect, a bug either way.
CATEGORIES = {"VALIDATION_ERROR", "NOT_FOUND", "CONFLICT", "UNAUTHORIZED", "FORBIDDEN"}

MEMORY_TYPES = [
    "requirements",
    "design",
    "code_pattern",
    "component",
    "function",
    "test_history",
    "session",
    "user_preference",
    "problem",
    "solution",
    "failed_tactic",
    "fact",
    "preference",
    "change",
]
RELATIONSHIP_TYPES = ["IMPLEMENTS", "RELATES_TO", "DEPENDS_ON", "depends-on", "tests", "SUPERSEDES"]
METADATA_KEYS = [
    "title",
    "priority",
    "status",
    "requirement_id",
    "component_id",
    "name",
    "design_type",
    "problem_id",
    "tags",
    "file_path",
    "code_refs",
    "related_requirements",
    "dependencies",
    "subject",
    "key",
    "value",
    "superseded",
    "start_line",
    "end_line",
    "confidence",
    "project",
    "branch",
]
METADATA_VALUES = ["High", "urgent-ish", "Approved", "accepted", "ADR", "maybe", "REQ-PROP-1", "comp-prop"]
CYPHER = [
    "MATCH (n) RETURN count(n) AS n",
    "MATCH (m:Memory) RETURN m.id AS id LIMIT 5",
    "MATCH (a)-[r]->(b) RETURN type(r) AS t LIMIT 5",
    "RETURN $x AS x",
    "MATCH (n) DETACH DELETE n",
    "CREATE (n:Memory {id: 'forged'}) RETURN n",
    "MATCH (m:Memory) SET m.content = 'pwned' RETURN m",
    "MERGE (n:Memory {id: 'forged'}) RETURN n",
    "CALL db.labels()",
    "MATCH (n) RETURN n; MATCH (n) DETACH DELETE n",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "RETURN 1/0 AS x",
]
SENTENCES = [
    "How do sessions share one store?",
    "def add(a, b):\n    return a + b",
    "retry with exponential backoff",
    "REQ-PROP-1",
    "calc add",
]

# Hostile values: every JSON type, the edges of each, and what parsers and stores trip on.
SPECIAL_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "\udfff",
    "x\ud800y",
    "\ufeff",
    "\u202eevil",
    "\x1b[31mred\x1b[0m",
    "\r\n\t\x0b\x0c",
    "\u2028\u2029",
    "İı ß ﬁ",
    "🙂👩‍👩‍👧",
    "\U0001d54f" * 10,
    "null",
    "NaN",
    "-1",
    "1e999",
    "true",
    "{}",
    "[]",
    '{"a": 1}',
    "'; DROP TABLE memories; --",
    "MATCH (n) DETACH DELETE n",
    "../../../../etc/passwd",
    "/etc/passwd",
    "~",
    "$HOME",
    "%s%s%n",
    "{{7*7}}",
    "*",
    "**/*",
    "(a+)+$",
    "00000000-0000-0000-0000-000000000000",
    "00000000-0000-4000-8000-000000000000",
    "{00000000-0000-4000-8000-000000000000}",
    "urn:uuid:00000000-0000-4000-8000-000000000000",
    "2026-02-30T25:61:61Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59+14:00",
]
# The SDK client refuses to serialise deeper arguments (pydantic: "Maximum serialization depth
# exceeded" at about 254 levels) and keys holding a lone surrogate (UnicodeEncodeError), before
# anything is sent: those never reach the server through the in-memory client.
MAX_DEPTH = 200
HUGE_LENGTHS = [4097, 10_001, 100_001, 1_000_001]
BIG_NUMBERS = [-1, 0, -(2**31), 2**31, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30), 10**400]
ODD_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1e308, -1e308, 0.5, 1.0000001, -1.5]


def nest(depth: int, kind: str, leaf: Any) -> Any:
    """``leaf`` wrapped ``depth`` times in a list or a one-key object."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


short_hostile_text: Strategy = st.one_of(
    st.sampled_from(SPECIAL_STRINGS),
    st.text(st.characters(categories=["Cc", "Cs", "Cf", "Zl", "Zp", "Co", "Mn", "So", "Lo"]), max_size=40),
)
huge_text: Strategy = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from(["Z", "\ud800", "é", "🙂", "\x00", "a\n", "../"]),
    st.sampled_from(HUGE_LENGTHS),
)
hostile_text: Strategy = st.one_of(short_hostile_text, huge_text)
hostile_integer: Strategy = st.one_of(st.sampled_from(BIG_NUMBERS), st.integers())
hostile_float: Strategy = st.one_of(
    st.sampled_from(ODD_FLOATS), st.floats(allow_nan=True, allow_infinity=True)
)
hostile_scalar: Strategy = st.one_of(st.none(), st.booleans(), hostile_integer, hostile_float, hostile_text)
hostile_key: Strategy = hostile_text.filter(lambda k: not any("\ud800" <= c <= "\udfff" for c in k))
hostile_array: Strategy = st.one_of(
    st.sampled_from([[], [None], [[]], [{}]]),
    st.lists(hostile_scalar, min_size=1, max_size=5),
    st.builds(nest, st.sampled_from([7, 64, MAX_DEPTH]), st.just("list"), hostile_scalar),
    st.builds(lambda n: list(range(n)), st.sampled_from([101, 1001, 100_001])),
    st.builds(lambda n, v: [v] * n, st.sampled_from([101, 1001]), short_hostile_text),
)
hostile_object: Strategy = st.one_of(
    st.sampled_from([{}, {"": None}, {"__proto__": {"polluted": True}}, {"constructor": 1}]),
    st.dictionaries(hostile_key, hostile_scalar, min_size=1, max_size=4),
    st.builds(nest, st.sampled_from([7, 64, MAX_DEPTH]), st.just("dict"), hostile_scalar),
    st.builds(lambda n: {f"k{i}": i for i in range(n)}, st.sampled_from([101, 10_001])),
)
# By JSON type: "wrong_type" sends one of another type, "same_type" a hostile one of the declared type.
BY_TYPE: dict[str, Strategy] = {
    "string": hostile_text,
    "integer": hostile_integer,
    "number": st.one_of(hostile_float, hostile_integer),
    "boolean": st.booleans(),
    "null": st.none(),
    "array": hostile_array,
    "object": hostile_object,
}
hostile_value: Strategy = st.one_of(hostile_scalar, hostile_array, hostile_object)
unknown_keys: Strategy = st.one_of(
    st.sampled_from(["__proto__", "constructor", "", " ", "\x00", "x" * 1000, "$where", "Query", "limit "]),
    hostile_key,
)
json_leaf: Strategy = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


@dataclass
class SchemaContext:
    """What the walk needs besides the schema: strategies for ids, hints by property path."""

    ids: Strategy  # "format": "uuid"
    hints: Mapping[str, Strategy] = field(default_factory=dict)  # fnmatch pattern on the path -> extra
    overrides: Mapping[str, Strategy] = field(default_factory=dict)  # exact path -> the only strategy
    require: tuple[str, ...] = ()  # top-level properties always sent (a shape the tool needs)
    omit: tuple[str, ...] = ()  # top-level properties never sent in a valid-ish call

    def free_object(self) -> Strategy:
        """Values for an object the schema leaves open (metadata, params): known keys and odd ones."""
        values = st.recursive(
            st.one_of(json_leaf, st.sampled_from(METADATA_VALUES), self.ids),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
            ),
            max_leaves=8,
        )
        keys = st.one_of(st.sampled_from(METADATA_KEYS), st.text(max_size=12))
        return st.dictionaries(keys, values, max_size=6)


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """A leaf schema hypothesis-jsonschema can take, with short strings."""
    out = {k: v for k, v in schema.items() if k not in ("description", "default", "title", "examples")}
    if out.get("type") == "string" and "enum" not in out:
        out["maxLength"] = max(out.get("minLength", 0), min(out.get("maxLength", SHORT_STRING), SHORT_STRING))
    return out


def valid_arguments(schema: dict[str, Any], ctx: SchemaContext, path: str = "") -> Strategy:
    """Values the schema accepts (plus hinted realistic ones), for the property at ``path``."""
    if path in ctx.overrides:
        return ctx.overrides[path]
    base = _schema_strategy(schema, ctx, path)
    extra = [
        strategy for pattern, strategy in ctx.hints.items() if path and fnmatch.fnmatchcase(path, pattern)
    ]
    return st.one_of(*extra, base) if extra else base


def _schema_strategy(schema: dict[str, Any], ctx: SchemaContext, path: str) -> Strategy:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of(*(valid_arguments(s, ctx, path) for s in schema[key]))
    kind = schema.get("type")
    if kind == "object":
        props: dict[str, Any] | None = schema.get("properties")
        if props is None or (not props and schema.get("additionalProperties") is not False):
            return ctx.free_object()
        required = [name for name in props if name in schema.get("required", [])]
        return st.fixed_dictionaries(
            {name: valid_arguments(props[name], ctx, _join(path, name)) for name in required},
            optional={
                name: valid_arguments(prop, ctx, _join(path, name))
                for name, prop in props.items()
                if name not in required
            },
        )
    if kind == "array" and isinstance(schema.get("items"), dict):
        low = schema.get("minItems", 0)
        high = max(low, min(schema.get("maxItems", 4), 4))
        return st.lists(valid_arguments(schema["items"], ctx, _join(path, "*")), min_size=low, max_size=high)
    if kind == "string" and schema.get("format") == "uuid":
        return ctx.ids
    return from_schema(_bounded(schema), custom_formats={"uuid": ctx.ids})


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


MOVES = ["same_type", "inner", "wrong_type", "unknown", "drop", "same_type", "inner"]


@st.composite
def hostile_arguments(draw: st.DrawFn, schema: dict[str, Any], valid: Strategy) -> Any:
    """A call broken in one to three ways, most often starting from a valid-ish call.

    Moves: a property (at any depth: ``change.metadata``, ``relationships.*.target_id``) set to a
    hostile value of its own JSON type or of another; an unknown property; a property dropped; a
    hostile value planted somewhere inside an object or array the call already has.
    """
    props: dict[str, Any] = schema.get("properties") or {}
    paths = property_paths(schema)
    args: dict[str, Any] = {} if draw(st.integers(0, 4)) == 0 else dict(draw(valid))
    for _ in range(draw(st.integers(1, 3))):
        move = draw(st.sampled_from(MOVES))
        nested = sorted(k for k, v in args.items() if isinstance(v, dict | list) and v)
        if move == "inner" and not nested:
            move = "same_type"
        if move in ("same_type", "wrong_type") and paths:
            path, prop = draw(st.sampled_from(paths))
            declared = _declared_type(prop)
            if move == "wrong_type" or declared not in BY_TYPE:
                others = [
                    t for t in BY_TYPE if t != declared and not (t == "integer" and declared == "number")
                ]
                declared = draw(st.sampled_from(others))
            args = set_path(args, path, draw(BY_TYPE[declared]), draw(st.integers(0, 99)))
        elif move == "unknown":
            args[draw(unknown_keys.filter(lambda k: k not in props))] = draw(hostile_value)
        elif move == "drop" and args:
            args.pop(draw(st.sampled_from(sorted(args))))
        elif move == "inner":
            key = draw(st.sampled_from(nested))
            args[key] = _plant(args[key], draw(hostile_value), draw(st.integers(0, 10**6)))
    return args


def property_paths(schema: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every property of the schema, nested ones included, as (path, schema); "*" is an array item."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for name, prop in sorted((schema.get("properties") or {}).items()):
        path = (*prefix, name)
        out.append((path, prop))
        if prop.get("properties"):
            out += property_paths(prop, path)
        items = prop.get("items")
        if isinstance(items, dict):
            out.append(((*path, "*"), items))
            if items.get("properties"):
                out += property_paths(items, (*path, "*"))
    return out


def set_path(container: Any, path: tuple[str, ...], value: Any, seed: int) -> Any:
    """A copy of ``container`` with ``value`` at ``path``, making the objects and arrays on the way."""
    head, rest = path[0], path[1:]
    if head == "*":
        items = list(container) if isinstance(container, list) else []
        i = seed % len(items) if items else len(items)
        child = items[i] if i < len(items) else None
        new = set_path(child, rest, value, seed // 2) if rest else value
        return [*items[:i], new, *items[i + 1 :]]
    out = dict(container) if isinstance(container, dict) else {}
    out[head] = set_path(out.get(head), rest, value, seed) if rest else value
    return out


def _declared_type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    for option in schema.get("anyOf", []):
        if option.get("type") not in (None, "null"):
            return str(option["type"])
    return None


def _plant(container: Any, value: Any, seed: int) -> Any:
    """A copy of ``container`` with ``value`` put at a position chosen by ``seed``, one level down
    or deeper (an item of a list, the value of a key, or a new key)."""
    if isinstance(container, list):
        items = list(container)
        i = seed % len(items) if items else 0
        if items and isinstance(items[i], dict | list) and seed % 2:
            items[i] = _plant(items[i], value, seed // 2)
        else:
            items.insert(i, value)
        return items
    if isinstance(container, dict):
        out = dict(container)
        keys = sorted(out, key=str)
        if keys and seed % 3:
            key = keys[seed % len(keys)]
            inner = out[key]
            out[key] = (
                _plant(inner, value, seed // 3) if isinstance(inner, dict | list) and seed % 2 else value
            )
        else:
            out[f"planted{seed % 7}"] = value
        return out
    return value


def strict_json(text: str) -> Any:
    """JSON as every client parses it: NaN and Infinity are not JSON."""

    def refuse(token: str) -> Any:
        raise ValueError(f"non-standard JSON constant {token} in a tool result")

    return json.loads(text, parse_constant=refuse)


def check_result(
    result: CallToolResult, check_error: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The shape every answer must have, success or refusal; returns the error (or {} on success).
    Since the JSON-RPC error check passed, no exception escaped the call either.

    ``check_error`` checks a refusal's JSON and returns the error it reports: seed 001's envelope
    (:func:`seed001_error`) unless a compatibility profile frames its errors its own way."""
    texts = [getattr(part, "text", "") for part in result.content]
    assert texts and result.content[0].type == "text", result
    for text in texts:
        assert "Traceback (most recent call last)" not in text, text[:2000]
    data = strict_json(texts[0])
    assert isinstance(data, dict), texts[0][:500]
    if not result.is_error:
        assert data.get("status") != "error", data
        assert result.structured_content == data, "structured content differs from the text"
        return {}
    assert result.structured_content is None, "an error must not carry structuredContent"
    assert len(texts[0]) < ENVELOPE_LIMIT, f"an error of {len(texts[0])} characters"
    return (check_error or seed001_error)(data)


def seed001_error(data: dict[str, Any]) -> dict[str, Any]:
    """Seed 001's error envelope ``{status: "error", error: {code, category, message, details,
    suggestion}}``; returns the error."""
    assert data.get("status") == "error" and set(data) == {"status", "error"}, data
    error = data["error"]
    assert set(error) == {"code", "category", "message", "details", "suggestion"}, error
    for key in ("code", "message", "suggestion"):
        assert isinstance(error[key], str) and error[key].strip(), (key, error)
    assert isinstance(error["details"], dict), error
    return dict(error)


def check_category(error: dict[str, Any]) -> None:
    """A refusal blames the input (or a conflict), not the server: see CATEGORIES."""
    assert error["category"] in CATEGORIES, f"a bad input answered as a server fault: {error}"


def is_dry_run(args: Any) -> bool:
    """Whether a call asks to change nothing (a dry run of a writing tool)."""
    if not isinstance(args, dict):
        return False
    options = args.get("options")
    nested = isinstance(options, dict) and options.get("dry_run") is True
    return args.get("mode") == "dry_run" or args.get("dry_run") is True or nested


@dataclass(frozen=True)
class Call:
    """A generated call; its repr (what Hypothesis prints for a failing example) is the Python
    source that rebuilds it exactly, kept short: a megabyte string shows as ``'Z' * 1000001``."""

    tool: str
    args: Any

    def __repr__(self) -> str:
        return describe(self.tool, self.args)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis's printer takes this over a dataclass's fields."""
        printer.text(repr(self))


def describe(tool: str, args: Any) -> str:
    """The call as Python source that rebuilds it exactly: repr keeps lone surrogates, NaN and
    control characters; long runs are written ``'Z' * 1000001`` and deep nesting ``nest(...)``."""
    return f"call_tool({tool!r}, {_source(args)})"


def _source(value: Any) -> str:
    depth, kind, leaf = _chain(value)
    if depth > 6:
        return f"nest({depth}, {kind!r}, {_source(leaf)})"
    if isinstance(value, str) and len(value) > 200:
        for size in range(1, 9):
            unit = value[:size]
            if unit * (len(value) // size) == value:
                return f"{unit!r} * {len(value) // size}"
        return repr(value)
    if isinstance(value, list):
        if len(value) > 50 and value == list(range(len(value))):
            return f"list(range({len(value)}))"
        if len(value) > 50 and all(v == value[0] for v in value):
            return f"[{_source(value[0])}] * {len(value)}"
        return "[" + ", ".join(_source(v) for v in value) + "]"
    if isinstance(value, dict):
        if len(value) > 50 and value == {f"k{i}": i for i in range(len(value))}:
            return f"{{f'k{{i}}': i for i in range({len(value)})}}"
        return "{" + ", ".join(f"{_source(k)}: {_source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        power = len(str(abs(value))) - 1
        if abs(value) == 10**power:
            return f"{'-' if value < 0 else ''}10**{power}"
    return repr(value)


def _chain(value: Any) -> tuple[int, str, Any]:
    """(depth, kind, leaf) of a value built by :func:`nest` (depth 0 for anything else)."""
    kind = "list" if isinstance(value, list) else "dict"
    depth = 0
    while True:
        if kind == "list" and isinstance(value, list) and len(value) == 1:
            value = value[0]
        elif kind == "dict" and isinstance(value, dict) and list(value) == ["k"]:
            value = value["k"]
        else:
            return depth, kind, value
        depth += 1


class Current(Generic[T]):
    """The server and tool of the running test, for strategies drawn before the test body runs.

    Draws must happen in Hypothesis's own (synchronous) engine, not inside the coroutine: a draw
    that overruns or fails a filter raises ``StopTest``, a ``BaseException`` that would kill
    anyio's runner task (and the module's server with it). So ``@given`` gets a strategy that
    reads the tool from here; a ``current`` fixture sets it once per parametrized test.
    """

    def __init__(self) -> None:
        self.subject: T | None = None
        self.tool = ""

    def get(self) -> tuple[T, str]:
        assert self.subject is not None, "use the 'current' fixture"
        return self.subject, self.tool

    @contextlib.contextmanager
    def running(self, subject: T, tool: str = "") -> Iterator[T]:
        self.subject, self.tool = subject, tool
        try:
            yield subject
        finally:
            self.subject, self.tool = None, ""
