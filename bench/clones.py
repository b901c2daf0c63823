"""Planted-clone benchmark for find_duplicates: per-type precision and recall (issue #16 item 2).

    .venv/bin/python bench/clones.py                   # 30 originals from click, default threshold
    .venv/bin/python bench/clones.py --n 50 --seed 7
    .venv/bin/python bench/clones.py --library .venv/lib/python3.11/site-packages/httpx
    .venv/bin/python bench/clones.py --threshold 0.8   # any threshold find_duplicates accepts

What it measures: whether find_duplicates, at its default threshold, finds copies of a function
that were pasted elsewhere in the same project, for the three classic clone types (the
SourcererCC / NiCad / BigCloneBench taxonomy), and whether it stays quiet for unrelated code.

Protocol:

1. The library (default: the installed ``click`` package, pure Python) is copied into a temporary
   project directory. From its ``.py`` files, ``--n`` originals are drawn with ``random.Random(seed)``
   among top-level functions and methods of top-level classes that span 6-40 lines and hold at
   least 4 statements (docstring excluded); nested functions are not candidates.
2. Each original gets three planted clones, one function per file under ``planted/type{1,2,3}/``
   in the same project, so they are indexed alongside the originals:
   * type 1: the original's exact text (decorators dropped, dedented) with a comment line added
     at the top of the body and the blank lines squeezed: only layout and comments differ;
   * type 2: ``ast``-rewritten: the function, its parameters (except self/cls) and its locals
     renamed consistently, int literals + 1, string literals changed (docstring kept), then
     ``ast.unparse`` (which also reformats and drops comments);
   * type 3: the type-2 rewrite plus three statement edits chosen with the seeded generator:
     one statement changed (an operator flipped, a literal or a call argument changed), one
     removed, one added (a guard, an assert, an assignment or a log call); then ``ast.unparse``.
3. The project is indexed through the real server (in-process MCP client, ``index_directory``
   with ``wait: true``; embedding model all-MiniLM-L6-v2 ONNX, ``--model-path``).
4. Direction: each planted clone's code is the ``find_duplicates`` query (``language: python``,
   default ``limit``); the clone is *found* when the original's location (file path and
   qualified name) is among the reported duplicates. Recall = found / n.
5. Precision, per type: of the reported duplicates other than the query's own location (the
   planted file is indexed too, so it always matches itself; units nested in the query count as
   its own location too), the share that are true: the original, one of its other planted
   clones, or a unit nested in one of those (find_duplicates also analyses a query's nested
   functions), or any unit reported as ``exact`` / ``renamed`` (hash-identical: a clone the
   library really holds, e.g. two identical ``__init__``). A ``similar`` hit on a genuine
   near-duplicate the library holds of the original counts against precision here; the
   negatives show how common that is. The original must still be among the ``limit`` reported
   duplicates to count as found: nested-unit matches may crowd it out.
6. Negatives: ``--n`` functions of the library that were not planted (same selection rules),
   queried with their own code. A reported duplicate other than their own location is a false
   positive unless it was reported as ``exact`` or ``renamed`` (same body or normalised-token
   hash: a clone the library really holds); the ``similar`` ones are counted as FP and listed
   with ``-v`` (some are genuine library near-duplicates: judge there). And ``--n`` functions of
   a second library (``--foreign``, default ``jsonschema``) that is *not* indexed: every
   duplicate reported for them is a false positive unless hash-identical.

Prints one row per clone type (n, found, recall, reported, true, precision, latency p50/p95 in
ms per find_duplicates call, how the original was matched: exact / renamed / similar) and one
row per negative set, plus the threshold used.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import random
import shutil
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import call
from memory_service.core.code.schemas import FindDuplicatesInput
from memory_service.server import build_server
from memory_service.settings import Settings

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MIN_LINES, MAX_LINES, MIN_STATEMENTS = 6, 40, 4
NEW_NAMES = (
    *("item", "value", "data", "result", "entry", "node", "obj", "elem", "current", "token"),
    *("part", "piece", "target", "source", "payload", "record", "handle", "state", "info", "spec"),
    *("field", "chunk", "buf", "acc", "tmp", "res", "out", "arg", "param", "ctx_obj"),
)


def installed(package: str) -> Path | None:
    try:
        module = __import__(package)
    except ImportError:
        return None
    return Path(module.__file__).parent if module.__file__ else None


# ---------------------------------------------------------------------------- selection


@dataclass
class Original:
    rel_path: str  # relative to the project root, as the index names files
    qualified_name: str
    source: str  # dedented, from `def` (decorators dropped)
    tree: ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Planted:
    kind: str  # type1 / type2 / type3 / negative / foreign
    original: Original
    rel_path: str | None  # the planted file; None for negatives (their own location is the original)
    code: str


def body_statements(fn: ast.AST) -> int:
    count = sum(isinstance(n, ast.stmt) for n in ast.walk(fn)) - 1
    return count - int(docstring_node(fn) is not None)


def docstring_node(fn: ast.AST) -> ast.Expr | None:
    body = getattr(fn, "body", [])
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def candidates(root: Path, base: Path) -> list[Original]:
    """Functions and methods of moderate size in ``root`` (paths relative to ``base``)."""
    found: list[Original] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue
        rel = path.relative_to(base).as_posix()
        pairs: list[tuple[str, ast.AST]] = [("", n) for n in module.body]
        for cls in module.body:
            if isinstance(cls, ast.ClassDef):
                pairs += [(cls.name + ".", n) for n in cls.body]
        for prefix, node in pairs:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            if not MIN_LINES <= lines <= MAX_LINES or body_statements(node) < MIN_STATEMENTS:
                continue
            segment = ast.get_source_segment(text, node, padded=True)
            if segment is None:
                continue
            source = textwrap.dedent(segment)
            tree = ast.parse(source).body[0]
            assert isinstance(tree, ast.FunctionDef | ast.AsyncFunctionDef)
            found.append(Original(rel, prefix + node.name, source, tree))
    return found


# ---------------------------------------------------------------------------- clone types


def type1(orig: Original) -> str:
    """Same tokens: a comment added at the top of the body, blank lines squeezed."""
    lines = [line.rstrip() for line in orig.source.splitlines() if line.strip()]
    body = orig.tree.body
    first = body[1] if docstring_node(orig.tree) is not None and len(body) > 1 else body[0]
    at = (
        first.lineno - 1 - sum(1 for line in orig.source.splitlines()[: first.lineno - 1] if not line.strip())
    )
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f"{indent}# planted copy (type 1): same code, other layout")
    return "\n".join(lines) + "\n"


class Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.mapping.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.mapping.get(node.arg, node.arg)
        self.generic_visit(node)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if node.name:
            node.name = self.mapping.get(node.name, node.name)
        self.generic_visit(node)
        return node


def local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs) if x.arg not in ("self", "cls")]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.append(node.name)
    declared = {n for s in ast.walk(fn) if isinstance(s, ast.Global | ast.Nonlocal) for n in s.names}
    return list(dict.fromkeys(n for n in names if n != "_" and n not in declared))


def change_literals(fn: ast.AST, keep: ast.AST | None) -> None:
    for node in ast.walk(fn):
        if not isinstance(node, ast.Constant) or node is keep:
            continue
        value = node.value
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            node.value = value + 1
        elif isinstance(value, float):
            node.value = value * 2
        elif isinstance(value, str):
            node.value = value + "_v2" if value.isidentifier() else (value + " (v2)" if value else "-")


def type2_tree(orig: Original, rng: random.Random) -> ast.FunctionDef | ast.AsyncFunctionDef:
    fn = copy.deepcopy(orig.tree)
    fn.decorator_list = []
    names = local_names(fn)
    pool = rng.sample(NEW_NAMES, len(NEW_NAMES))
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | set(names)
    mapping: dict[str, str] = {}
    for i, name in enumerate(names):
        new = pool[i % len(pool)] + ("" if i < len(pool) else str(i))
        while new in taken:
            new += "_"
        taken.add(new)
        mapping[name] = new
    Renamer(mapping).visit(fn)
    doc = docstring_node(fn)
    change_literals(fn, doc.value if doc else None)
    fn.name = f"{fn.name.strip('_') or 'fn'}_{rng.choice(('copy', 'alt', 'impl', 'v2', 'local'))}"
    return fn


def type2(orig: Original, rng: random.Random) -> str:
    return ast.unparse(type2_tree(orig, rng)) + "\n"


def statement_lists(fn: ast.AST) -> list[list[ast.stmt]]:
    lists = []
    for node in ast.walk(fn):
        for attr in ("body", "orelse", "finalbody"):
            value = getattr(node, attr, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                lists.append(value)
        if isinstance(node, ast.Match):
            lists += [case.body for case in node.cases]
    return lists


def mutate_statement(stmt: ast.stmt, rng: random.Random) -> bool:
    """Change one thing inside ``stmt``: an operator, a literal, or a call's arguments."""
    flips: dict[type, type] = {
        ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq,
        ast.Lt: ast.LtE,
        ast.LtE: ast.Lt,
        ast.Gt: ast.GtE,
        ast.GtE: ast.Gt,
        ast.Is: ast.IsNot,
        ast.IsNot: ast.Is,
        ast.In: ast.NotIn,
        ast.NotIn: ast.In,
        ast.Add: ast.Sub,
        ast.Sub: ast.Add,
        ast.Mult: ast.FloorDiv,
        ast.And: ast.Or,
        ast.Or: ast.And,
    }
    options: list[Any] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Compare):
            options.append(("cmp", node))
        elif isinstance(node, ast.BinOp | ast.BoolOp) and type(node.op) in flips:
            options.append(("op", node))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int | str)
            and not isinstance(node.value, bool)
        ):
            options.append(("lit", node))
        elif isinstance(node, ast.Call):
            options.append(("call", node))
    if not options:
        return False
    kind, node = rng.choice(options)
    if kind == "cmp":
        node.ops = [flips.get(type(op), ast.Eq)() for op in node.ops]
    elif kind == "op":
        node.op = flips[type(node.op)]()
    elif kind == "lit":
        node.value = node.value * 3 + 7 if isinstance(node.value, int) else f"{node.value}:changed"
    elif node.args and rng.random() < 0.5:
        node.args.pop()
    else:
        node.args.append(ast.Constant(value=rng.choice((True, None, 0))))
    return True


def added_statement(names: list[str], rng: random.Random) -> ast.stmt:
    v = rng.choice(names) if names else "result"
    templates = (
        f"if {v} is None:\n    raise ValueError('{v} is required')",
        f"assert {v} is not None, 'missing {v}'",
        f"_count = len({v}) if hasattr({v}, '__len__') else 0",
        f"logger.debug('processing %r', {v})",
        f"{v}_seen = {{id({v})}}",
    )
    return ast.parse(rng.choice(templates)).body[0]


def type3(orig: Original, rng: random.Random) -> str:
    fn = type2_tree(orig, rng)
    doc = docstring_node(fn)
    names = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")] or local_names(fn)
    # 1. change one statement (any statement other than the docstring and compound headers' bodies)
    simple = [s for s in ast.walk(fn) if isinstance(s, ast.stmt) and s is not fn and s is not doc]
    for stmt in rng.sample(simple, len(simple)):
        if mutate_statement(stmt, rng):
            break
    # 2. remove one statement from a list that keeps at least one other statement
    lists = [body for body in statement_lists(fn) if len([s for s in body if s is not doc]) >= 2]
    if lists:
        body = rng.choice(lists)
        removable = [i for i, s in enumerate(body) if s is not doc]
        del body[rng.choice(removable)]
    # 3. add one statement into the function's own body (after the docstring)
    first = 1 if docstring_node(fn) is not None else 0
    fn.body.insert(rng.randint(first, len(fn.body)), added_statement(names, rng))
    ast.fix_missing_locations(fn)
    return ast.unparse(fn) + "\n"


# ---------------------------------------------------------------------------- running


@dataclass
class Tally:
    n: int = 0
    found: int = 0
    reported: int = 0
    true: int = 0
    via: dict[str, int] = field(default_factory=dict)
    latency_ms: list[float] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] if ordered else 0.0


def same_unit(dup: dict[str, Any], rel_path: str, qualified_name: str) -> bool:
    return norm(dup["file_path"]) == rel_path and dup["name"] == qualified_name


def within(dup: dict[str, Any], rel_path: str, qualified_name: str) -> bool:
    """The unit itself or one nested in it (a query's nested functions are analysed too)."""
    name = dup["name"]
    inside = name == qualified_name or name.startswith(qualified_name + ".")
    return inside and norm(dup["file_path"]) == rel_path


def norm(path: str) -> str:
    return Path(path).as_posix().lstrip("./")


def plant(project: Path, originals: list[Original], seed: int) -> list[Planted]:
    planted: list[Planted] = []
    for i, orig in enumerate(originals):
        rng = random.Random(f"{seed}:{orig.rel_path}:{orig.qualified_name}")
        for kind, code in (("type1", type1(orig)), ("type2", type2(orig, rng)), ("type3", type3(orig, rng))):
            ast.parse(code)  # every planted clone must be valid Python
            rel = f"planted/{kind}/clone_{i:03d}.py"
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(code, encoding="utf-8")
            planted.append(Planted(kind, orig, rel, code))
    return planted


def planted_name(p: Planted) -> str:
    tree = ast.parse(p.code).body[0]
    return tree.name  # type: ignore[attr-defined]


async def run(args: argparse.Namespace) -> None:
    library: Path = args.library.resolve()
    with tempfile.TemporaryDirectory(prefix="clonebench-") as tmp:
        project, data = Path(tmp) / "project", Path(tmp) / "data"
        lib_copy = project / library.name
        shutil.copytree(library, lib_copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        pool = candidates(lib_copy, project)
        rng = random.Random(args.seed)
        if len(pool) < 2 * args.n:
            sys.exit(f"{library} has only {len(pool)} candidate functions; lower --n")
        chosen = rng.sample(pool, 2 * args.n)
        originals, negatives = chosen[: args.n], chosen[args.n :]
        planted = plant(project, originals, args.seed)
        queries = planted + [Planted("negative", o, None, o.source) for o in negatives]
        if args.foreign is not None and args.foreign.is_dir():
            foreign = candidates(args.foreign, args.foreign.parent)
            picks = random.Random(args.seed + 1).sample(foreign, min(args.n, len(foreign)))
            queries += [Planted("foreign", o, None, o.source) for o in picks]
        # the true relations of each clone: its original and its sibling clones
        family: dict[int, set[tuple[str, str]]] = {}
        for p in planted:
            key = id(p.original)
            family.setdefault(key, {(p.original.rel_path, p.original.qualified_name)})
            family[key].add((p.rel_path or "", planted_name(p)))

        settings = Settings(
            data_dir=data,
            project_root=project,
            project="bench",
            embedding={"model_path": args.model_path},
        )
        default_threshold = FindDuplicatesInput.model_fields["threshold"].default
        threshold = default_threshold if args.threshold is None else args.threshold
        tallies: dict[str, Tally] = {}
        async with Client(build_server(settings)) as client:
            t0 = time.perf_counter()
            job = (await call(client, "index_directory", {"directory_path": str(project), "wait": True}))[
                "job"
            ]
            index_s = time.perf_counter() - t0
            stats = job.get("stats", {})
            print(
                f"indexed {library.name} + {len(planted)} planted clones: {job['status']}, "
                f"{stats.get('files_seen')} files, {stats.get('units')} units, {index_s:.1f} s"
            )
            await call(client, "find_duplicates", {"code": originals[0].source, "language": "python"})  # warm
            for q in queries:
                req: dict[str, Any] = {"code": q.code, "language": "python"}
                if args.threshold is not None:
                    req["threshold"] = args.threshold
                t0 = time.perf_counter()
                out = await call(client, "find_duplicates", req)
                elapsed = (time.perf_counter() - t0) * 1000
                t = tallies.setdefault(q.kind, Tally())
                t.n += 1
                t.latency_ms.append(elapsed)
                own = (
                    (q.rel_path, planted_name(q))
                    if q.rel_path
                    else (q.original.rel_path, q.original.qualified_name)
                )
                others = [d for d in out["duplicates"] if not within(d, *own)]
                t.reported += len(others)
                if q.kind in ("negative", "foreign"):
                    hashed = [d for d in others if d["match_type"] != "similar"]
                    t.true += len(hashed)  # same body or normalised hash: a real clone in the library
                    t.via["exact/renamed"] = t.via.get("exact/renamed", 0) + len(hashed)
                    t.via["similar"] = t.via.get("similar", 0) + len(others) - len(hashed)
                    for d in others:
                        t.examples.append(
                            f"{q.kind}: {q.original.rel_path}:{q.original.qualified_name} -> "
                            f"{d['file_path']}:{d['name']} ({d['match_type']} {d['similarity']})"
                        )
                    continue
                kin = family[id(q.original)]
                true = [
                    d
                    for d in others
                    if d["match_type"] != "similar" or any(within(d, *member) for member in kin)
                ]
                t.true += len(true)
                hit = next(
                    (d for d in others if same_unit(d, q.original.rel_path, q.original.qualified_name)), None
                )
                if hit is not None:
                    t.found += 1
                    t.via[hit["match_type"]] = t.via.get(hit["match_type"], 0) + 1
                else:
                    best = ", ".join(f"{d['name']} {d['match_type']} {d['similarity']}" for d in others[:3])
                    t.examples.append(
                        f"{q.kind} miss: {q.original.rel_path}:{q.original.qualified_name} "
                        f"(reported: {best or 'nothing'})"
                    )
                for d in others:
                    if not any(d is x for x in true):
                        t.examples.append(
                            f"{q.kind} FP: {q.original.qualified_name} -> {d['file_path']}:{d['name']} "
                            f"({d['match_type']} {d['similarity']})"
                        )
    report(tallies, threshold, default_threshold, args)


def report(tallies: dict[str, Tally], threshold: float, default: float, args: argparse.Namespace) -> None:
    print(f"\nfind_duplicates threshold {threshold} (tool default {default}); seed {args.seed}; n {args.n}")
    head = f"{'type':<9}{'n':>4}{'found':>7}{'recall':>8}{'reported':>10}{'true':>6}{'precision':>11}"
    print(head + f"{'p50 ms':>9}{'p95 ms':>9}  matched as")
    for kind in ("type1", "type2", "type3", "negative", "foreign"):
        t = tallies.get(kind)
        if t is None:
            continue
        p50, p95 = pct(t.latency_ms, 50), pct(t.latency_ms, 95)
        if kind in ("negative", "foreign"):
            flagged = len({e.split(" -> ")[0] for e in t.examples})
            fp = t.reported - t.true
            print(
                f"{kind:<9}{t.n:>4}{'-':>7}{'-':>8}{t.reported:>10}{t.true:>6}{'FP ' + str(fp):>11}"
                f"{p50:>9.1f}{p95:>9.1f}  {flagged} of {t.n} queries reported something; "
                f"hash clones {t.via.get('exact/renamed', 0)}"
            )
            continue
        precision = f"{t.true / t.reported:.3f}" if t.reported else "n/a"
        via = ", ".join(f"{k} {v}" for k, v in sorted(t.via.items()))
        print(
            f"{kind:<9}{t.n:>4}{t.found:>7}{t.found / t.n:>8.3f}{t.reported:>10}{t.true:>6}{precision:>11}"
            f"{p50:>9.1f}{p95:>9.1f}  {via}"
        )
    if args.verbose:
        print()
        for t in tallies.values():
            for line in t.examples:
                print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=30, help="originals per clone type (and negatives)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--library", type=Path, default=installed("click"), help="package directory to index")
    parser.add_argument(
        "--foreign",
        type=Path,
        default=installed("jsonschema"),
        help="second, unindexed library for negatives",
    )
    parser.add_argument(
        "--threshold", type=float, default=None, help="find_duplicates threshold (tool default)"
    )
    parser.add_argument(
        "--model-path", type=Path, default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", DEFAULT_MODEL))
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list misses and false positives")
    args = parser.parse_args()
    if args.library is None or not args.library.is_dir():
        sys.exit("give --library: a package directory of Python sources")
    anyio.run(run, args)


if __name__ == "__main__":
    main()
