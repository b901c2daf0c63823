"""Code indexing, code_search and find_duplicates through the MCP client, on a repository it never saw."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import REPO, profile_settings, require_model
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BILLING = '''\
"""Billing helpers."""
import json
from shop.money import round_cents


class InvoiceRenderer:
    """Render invoices as PDF documents for customers."""

    def render(self, invoice):
        """Turn an invoice into PDF bytes."""
        return self._layout(invoice)

    def _layout(self, invoice):
        return json.dumps(invoice)


def total_with_tax(items, rate):
    """Sum line items and add sales tax."""
    subtotal = 0
    for item in items:
        if item.price > 0:
            subtotal += item.price * item.qty
    return round_cents(subtotal * (1 + rate))
'''

MONEY = '''\
def round_cents(value):
    """Round a money amount to whole cents."""
    return round(value, 2)


def retry_with_backoff(call, attempts=5):
    """Retry a flaky network call with exponential backoff."""
    delay = 0.1
    for _ in range(attempts):
        try:
            return call()
        except OSError:
            delay *= 2
    raise TimeoutError("gave up")
'''

# A planted copy-paste clone of total_with_tax with every name changed.
CLONE = """\
def compute_order_sum(entries, vat):
    acc = 0
    for entry in entries:
        if entry.cost > 0:
            acc += entry.cost * entry.count
    return round_cents(acc * (1 + vat))
"""


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "billing.py").write_text(BILLING)
    (repo / "shop" / "money.py").write_text(MONEY)
    (repo / "shop" / "orders.py").write_text("from shop.money import round_cents\n\n\n" + CLONE)
    (repo / "web").mkdir()
    (repo / "web" / "cart.ts").write_text(
        textwrap.dedent(
            """\
            /** Shopping cart kept in the browser. */
            export class Cart {
              /** Add a product to the cart. */
              add(productId: string, qty: number): void { this.items.push({productId, qty}); }
            }
            """
        )
    )
    (repo / "node_modules" / "lib").mkdir(parents=True)
    (repo / "node_modules" / "lib" / "index.js").write_text("function vendored() {}\n")
    (repo / "build").mkdir()
    (repo / "build" / "gen.py").write_text("def generated(): pass\n")
    (repo / ".gitignore").write_text("secret_*.py\n")
    (repo / "secret_keys.py").write_text("def leak(): pass\n")
    (repo / "notes.txt").write_text("not code")
    return repo


@pytest.fixture(scope="module")
async def indexed(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, Path]]:
    root = tmp_path_factory.mktemp("index")
    repo = make_repo(root)
    settings = Settings(
        data_dir=root / "data",
        project_root=repo,
        project="shop",
        embedding=EmbeddingSettings(model_path=require_model()),
        **profile_settings(root / "data"),
    )
    async with Client(build_server(settings)) as client:
        started = await call_ok(client, "index_directory", {"directory_path": str(repo), "wait": True})
        assert started["status"] == "started"
        assert started["job"]["status"] == "completed", started
        yield client, repo


async def test_directory_job_indexes_and_skips_what_it_should(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    status = await call_ok(client, "index_status", {})
    index = status["index"]
    assert index["total_files"] == 4
    assert index["languages"] == {"python": 3, "typescript": 1}
    assert index["total_classes"] == 2  # InvoiceRenderer, Cart
    assert index["total_functions"] == 7  # render, _layout, total_with_tax, round_cents, retry, clone, add
    assert index["last_indexed"]
    job = status["recent_jobs"][0]
    stats = job["stats"]
    assert job["status"] == "completed" and job["progress"] == 100
    assert stats["skipped_by_reason"]["vendored"] == 2  # node_modules/, build/
    assert stats["skipped_by_reason"]["gitignored"] == 1
    assert stats["skipped_by_reason"]["unsupported"] >= 1  # notes.txt
    assert stats["units"] == 9 and stats["files_failed"] == 0
    one = await call_ok(client, "index_status", {"job_id": job["job_id"]})
    assert one["job"]["job_id"] == job["job_id"]


async def test_code_search_finds_functions_described_in_words(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    out = await call_ok(client, "code_search", {"query": "retry a network call with exponential backoff"})
    top = out["results"][0]
    assert top["name"] == "retry_with_backoff" and top["file_path"] == "shop/money.py"
    assert top["docstring"].startswith("Retry a flaky")
    assert 0 < top["similarity"] <= 1
    pdf = await call_ok(client, "code_search", {"query": "generate a PDF for an invoice", "limit": 3})
    assert {r["name"] for r in pdf["results"]} & {"render", "InvoiceRenderer"}
    ts = await call_ok(client, "code_search", {"query": "add product to cart", "language": "typescript"})
    assert {r["language"] for r in ts["results"]} == {"typescript"}
    assert ts["results"][0]["name"] == "add"


async def test_code_snippet_query_finds_its_source(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    out = await call_ok(
        client, "code_search", {"query": "def round_cents(value):\n    return round(value, 2)"}
    )
    assert out["results"][0]["name"] == "round_cents"


async def test_find_duplicates_finds_planted_clone(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    snippet = BILLING.split("def total_with_tax")[1]
    out = await call_ok(client, "find_duplicates", {"code": "def total_with_tax" + snippet, "threshold": 0.9})
    assert out["has_duplicates"] is True
    kinds = {d["name"]: d["match_type"] for d in out["duplicates"]}
    assert kinds["total_with_tax"] == "exact"
    assert kinds["compute_order_sum"] == "renamed"
    renamed = next(d for d in out["duplicates"] if d["name"] == "compute_order_sum")
    assert renamed["file_path"] == "shop/orders.py" and renamed["start_line"] == 4
    assert "shared helper" in renamed["recommendation"]
    none = await call_ok(
        client,
        "find_duplicates",
        {"code": "def parse_yaml_config(path):\n    return yaml.safe_load(open(path))"},
    )
    assert none["has_duplicates"] is False and none["duplicates"] == []


# total_with_tax copied, renamed, reformatted and edited (a guard added, a comparison changed): a
# near-miss (type-3) clone, which neither hash matches.
NEAR_MISS = """\
def order_total(lines, tax_rate):
    if not lines:
        return 0
    total = 0
    for line in lines:
        if (line.price >= 0):
            total += line.price * line.qty
    return round_cents(total * (1 + tax_rate))
"""


async def test_find_duplicates_finds_an_edited_copy(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    out = await call_ok(client, "find_duplicates", {"code": NEAR_MISS})
    assert out["analysed_units"] == ["order_total"]
    found = {d["name"]: d for d in out["duplicates"]}
    original = found["total_with_tax"]
    assert original["match_type"] == "similar" and 0.85 <= original["similarity"] < 1
    assert original["file_path"] == "shop/billing.py" and "is similar" in original["recommendation"]
    assert out["duplicates"][0]["name"] == "total_with_tax"  # the closest copy first
    assert not {"retry_with_backoff", "round_cents", "render"} & set(found)
    strict = await call_ok(client, "find_duplicates", {"code": NEAR_MISS, "threshold": 0.95})
    assert "total_with_tax" not in {d["name"] for d in strict["duplicates"]}


async def test_index_file_reports_counts_and_skips_unchanged(indexed: tuple[Client, Path]) -> None:
    client, repo = indexed
    out = await call_ok(client, "index_file", {"file_path": "shop/billing.py"})
    assert out["status"] == "skipped"
    forced = await call_ok(
        client, "index_file", {"file_path": str(repo / "shop" / "billing.py"), "force": True}
    )
    assert forced["status"] == "indexed"
    assert (forced["functions"], forced["classes"]) == (3, 1)
    assert forced["relationships"] >= 5  # CONTAINS x4, IMPORTS x2, CALLS resolved
    txt = await call_ok(client, "index_file", {"file_path": "notes.txt"})
    assert txt["status"] == "unsupported" and "supported" in txt["message"]


async def test_reindex_changed_touches_only_what_changed(indexed: tuple[Client, Path]) -> None:
    client, repo = indexed
    (repo / "shop" / "money.py").write_text(MONEY.replace("retry_with_backoff", "retry_forever"))
    (repo / "shop" / "orders.py").unlink()
    (repo / "shop" / "tax.py").write_text(
        'def vat_rate(country):\n    """VAT rate of a country."""\n    return 0.2\n'
    )
    out = await call_ok(client, "reindex", {"scope": "changed", "wait": True})
    stats = out["job"]["stats"]
    assert out["job"]["status"] == "completed"
    assert stats["files_indexed"] == 2  # money.py changed, tax.py new
    assert stats["files_unchanged"] == 2  # billing.py, cart.ts
    assert stats["files_removed"] == 1  # orders.py
    found = await call_ok(client, "code_search", {"query": "retry with backoff", "limit": 10})
    names = {r["name"] for r in found["results"]}
    assert "retry_forever" in names and "retry_with_backoff" not in names
    dup = await call_ok(client, "find_duplicates", {"code": CLONE, "threshold": 0.95})
    assert "compute_order_sum" not in {d["name"] for d in dup["duplicates"]}  # deleted file's units are gone
    status = await call_ok(client, "index_status", {})
    assert status["index"]["total_files"] == 4
    vat = await call_ok(client, "code_search", {"query": "VAT rate for a country", "limit": 1})
    assert vat["results"][0]["name"] == "vat_rate"


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("index_file", {}, "VAL_MISSING_FIELD"),
        ("index_file", {"file_path": "does/not/exist.py"}, "NF_PATH"),
        ("index_file", {"file_path": "/etc/passwd"}, "VAL_PATH_OUTSIDE_ROOTS"),
        ("index_file", {"file_path": "../outside.py"}, "VAL_PATH_OUTSIDE_ROOTS"),
        ("index_file", {"file_path": "shop"}, "VAL_NOT_A_FILE"),
        ("index_directory", {}, "VAL_MISSING_FIELD"),
        ("index_directory", {"directory_path": "/usr"}, "VAL_PATH_OUTSIDE_ROOTS"),
        ("index_directory", {"directory_path": "shop/billing.py"}, "VAL_NOT_A_DIRECTORY"),
        ("index_directory", {"directory_path": "nope"}, "NF_PATH"),
        ("index_file", {"file_path": "shop/bill\x00ing.py"}, "VAL_INVALID_PATH"),
        ("index_file", {"file_path": "a" * 300 + ".py"}, "VAL_PATH_TOO_LONG"),
        ("index_file", {"file_path": "/".join(["abcdefgh"] * 454)}, "VAL_PATH_TOO_LONG"),  # > PATH_MAX
        ("index_file", {"file_path": "~no_such_user_here/x.py"}, "VAL_INVALID_PATH"),
        ("index_directory", {"directory_path": "sh\x00op"}, "VAL_INVALID_PATH"),
        ("index_directory", {"directory_path": "d" * 300}, "VAL_PATH_TOO_LONG"),
        ("index_directory", {"directory_path": "shop", "exclude": ["tests/", "!"]}, "VAL_INVALID_GLOB"),
        ("index_directory", {"directory_path": "shop", "filters": ["[z-a].py"]}, "VAL_INVALID_GLOB"),
        ("reindex", {"directory_path": "sh\x00op"}, "VAL_INVALID_PATH"),
        ("reindex", {"directory_path": "d" * 300}, "VAL_PATH_TOO_LONG"),
        ("index_status", {"job_id": "00000000-0000-4000-8000-000000000000"}, "NF_JOB"),
        ("index_status", {"job_id": "job-1"}, "VAL_INVALID_UUID"),
        ("reindex", {"scope": "partial"}, "VAL_INVALID_ENUM"),
        ("code_search", {}, "VAL_MISSING_FIELD"),
        ("code_search", {"query": ""}, "VAL_EMPTY"),
        ("code_search", {"query": "x", "language": "cobol"}, "VAL_UNSUPPORTED_LANGUAGE"),
        ("code_search", {"query": "x", "limit": 51}, "VAL_OUT_OF_RANGE"),
        ("find_duplicates", {}, "VAL_MISSING_FIELD"),
        ("find_duplicates", {"code": "def f(): pass", "threshold": 0.5}, "VAL_OUT_OF_RANGE"),
        ("find_duplicates", {"code": "def f(): pass", "limit": 21}, "VAL_OUT_OF_RANGE"),
        ("find_duplicates", {"code": "def f(): pass", "language": "klingon"}, "VAL_UNSUPPORTED_LANGUAGE"),
    ],
)
async def test_index_tools_bad_inputs(
    indexed: tuple[Client, Path], tool: str, args: dict[str, Any], code: str
) -> None:
    client, _ = indexed
    error = await call_error(client, tool, args)
    assert error["code"] == code, error
    assert "\x00" not in error["message"] and len(error["message"]) < 400  # a prefix, never the input


async def test_bad_path_errors_say_what_and_how_to_fix(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    nul = await call_error(client, "index_file", {"file_path": "shop/bill\x00ing.py"})
    assert "NUL byte" in nul["message"] and "without NUL bytes" in nul["suggestion"]
    assert nul["details"] == {"field": "file_path", "provided": "shop/bill\\x00ing.py", "length": 16}
    long = await call_error(client, "reindex", {"directory_path": "d" * 300})
    assert "300 bytes, over the 255-byte limit" in long["message"] and "255 bytes" in long["suggestion"]
    assert long["details"]["field"] == "directory_path" and long["details"]["length"] == 300
    assert len(long["details"]["provided"]) < 100


async def test_progress_notifications_when_waiting(indexed: tuple[Client, Path]) -> None:
    client, repo = indexed
    big = repo / "big"
    shutil.copytree(REPO / "tests" / "fixtures" / "languages", big)
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    result = await client.call_tool(
        "index_directory", {"directory_path": "big", "wait": True}, progress_callback=on_progress
    )
    assert not result.is_error
    assert seen and seen[-1] == 100
    assert seen == sorted(seen)


async def test_bad_job_id_suggestion_names_the_job_tools(indexed: tuple[Client, Path]) -> None:
    client, _ = indexed
    error = await call_error(client, "index_status", {"job_id": "job-1"})
    assert "index_directory" in error["suggestion"]
