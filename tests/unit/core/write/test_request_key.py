"""Request keys: deterministic ids and write keys per bound request, random and none unbound."""

from __future__ import annotations

import uuid

import anyio
import anyio.to_thread

from memory_service.core.write import request_key
from memory_service.core.write.request_key import (
    REQUEST_KEY_META,
    bound,
    new_id,
    next_write_key,
    peek_write_key,
)


def test_unbound_ids_are_random_uuid4_and_there_is_no_write_key() -> None:
    first, second = new_id(), new_id()
    assert first != second and uuid.UUID(first).version == 4
    assert next_write_key() is None and peek_write_key() is None and request_key.current() is None


def test_the_same_key_makes_the_same_ids_in_the_same_order() -> None:
    with bound("k-1"):
        first = [new_id() for _ in range(3)]
    with bound("k-1"):
        again = [new_id() for _ in range(3)]
    with bound("k-2"):
        other = [new_id() for _ in range(3)]
    assert first == again and len(set(first)) == 3
    assert not set(first) & set(other)
    assert all(uuid.UUID(i).version == 5 for i in first)


def test_write_keys_count_from_one_and_peek_does_not_use_them() -> None:
    with bound("req"):
        assert peek_write_key() == "req#1" and peek_write_key(ahead=2) == "req#3"
        assert next_write_key() == "req#1"
        assert peek_write_key() == "req#2"
        assert next_write_key() == "req#2"
    with bound("req"):  # a re-send starts over
        assert next_write_key() == "req#1"


def test_ids_and_write_keys_have_separate_counters() -> None:
    with bound("req"):
        new_id()
        assert next_write_key() == "req#1"
    with bound("req"):
        assert next_write_key() == "req#1"
        first_id = new_id()
    with bound("req"):
        assert new_id() == first_id


def test_binding_ends_with_the_block_and_nests() -> None:
    with bound("outer"):
        next_write_key()
        with bound(None):
            assert request_key.current() is None and next_write_key() is None
        with bound(""):  # an empty key is no key
            assert request_key.current() is None
        assert next_write_key() == "outer#2"  # the outer request's counters are untouched
    assert request_key.current() is None


def test_the_worker_thread_shares_the_counters_of_the_request() -> None:
    """anyio.to_thread.run_sync copies the context (as the tool registry runs handlers): the copy
    holds the same request object, so counters advance across the thread and back."""

    async def main() -> list[str | None]:
        with bound("req"):
            in_thread = await anyio.to_thread.run_sync(lambda: [next_write_key(), next_write_key()])
            return [*in_thread, next_write_key()]

    assert anyio.run(main) == ["req#1", "req#2", "req#3"]


def test_from_meta_takes_a_non_empty_string_of_at_most_200_chars() -> None:
    assert request_key.from_meta({REQUEST_KEY_META: "abc"}) == "abc"
    assert request_key.from_meta({REQUEST_KEY_META: "x" * 200}) == "x" * 200
    for bad in ("", "x" * 201, 7, None, ["a"]):
        assert request_key.from_meta({REQUEST_KEY_META: bad}) is None
    assert request_key.from_meta(None) is None and request_key.from_meta({"other": "a"}) is None
