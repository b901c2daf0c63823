"""The id of a line no JSON parser takes whole (daemon/wire.py): what the daemon answers under."""

from __future__ import annotations

import pytest

from memory_service.daemon.wire import message_id


@pytest.mark.parametrize(
    ("line", "found"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"x","params":{"q":"\xff"}}', 7),
        (b'{"method":"x","params":{"a":' + b"[" * 5000 + b"]" * 5000 + b'},"id":"late"}', "late"),
        (b'{"jsonrpc":"2.0","id":-3,"params":{"n":' + b"9" * 5000 + b"}}", -3),
        (b'{"params":{"id":1,"s":"\\"id\\": 2"},"id":3}', 3),  # nested and quoted ids are not it
        (b'{"jsonrpc":"2.0","method":"id","params":["id"]}', None),  # "id" as a value
        (b'{"id":"\\ud800"}', None),  # an id that cannot go back on the wire
        (b'{"id":' + b"9" * 5000 + b"}", None),
        (b'{"id":null}', None),
        (b"\xff\xfe", None),
    ],
)
def test_the_top_level_id_is_found_whatever_the_rest_holds(line: bytes, found: object) -> None:
    assert message_id(line) == found
