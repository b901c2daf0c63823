"""split_identifiers / identifier_parts: compound code names become words, the name itself stays."""

from __future__ import annotations

import pytest

from memory_service.embeddings.bm25 import identifier_parts, split_identifiers


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("parseHttpRequest", ["parse", "Http", "Request"]),
        ("parse_http_request", ["parse", "http", "request"]),
        ("HTTPServer", ["HTTP", "Server"]),
        ("XMLHttpRequest", ["XML", "Http", "Request"]),
        ("readHTML_toJSON", ["read", "HTML", "to", "JSON"]),
        ("IOError", ["IO", "Error"]),
        ("MAX_RETRY_COUNT", ["MAX", "RETRY", "COUNT"]),
        ("getV2Token", ["get", "V2", "Token"]),
        ("sha256Hex", ["sha256", "Hex"]),
        ("S3Bucket", ["S3", "Bucket"]),
        ("__init__", ["init"]),
        ("word", ["word"]),
        ("café_crème", ["café_crème"]),  # non-ASCII: left whole
    ],
)
def test_identifier_parts(token: str, parts: list[str]) -> None:
    assert identifier_parts(token) == parts


def test_split_keeps_the_identifier_and_appends_its_parts() -> None:
    assert split_identifiers("call parseHttpRequest now") == "call parseHttpRequest parse Http Request now"


def test_split_leaves_prose_numbers_and_punctuation_alone() -> None:
    text = "The cache expires after 30 minutes (see docs)."
    assert split_identifiers(text) == text


def test_split_handles_paths_and_qualified_names() -> None:
    assert split_identifiers("app.user_service.getUser()") == (
        "app.user_service user service.getUser get User()"
    )
    assert split_identifiers("__init__ stays") == "__init__ stays"
    assert split_identifiers("") == ""
