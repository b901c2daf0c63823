"""PathPolicy: paths the OS cannot take are validation errors; reads re-check what was checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_service.core.code.paths import PathPolicy
from memory_service.core.errors import ValidationError
from tests.fifo_guard import fifo_guard


def _policy(tmp_path: Path, max_file_bytes: int = 1_000) -> PathPolicy:
    (tmp_path / "root" / "pkg").mkdir(parents=True)
    (tmp_path / "root" / "pkg" / "mod.py").write_text("def inside(): pass\n")
    return PathPolicy(tmp_path / "root", [], max_file_bytes)


def _refused(policy: PathPolicy, raw: str, want: str = "file") -> ValidationError:
    with pytest.raises(ValidationError) as info:
        policy.resolve(raw, field="file_path", want=want)  # type: ignore[arg-type]
    error = info.value
    assert error.message and error.suggestion
    assert error.details["field"] == "file_path" and error.details["length"] == len(raw)
    assert len(error.details["provided"]) <= 81 and len(error.message) < 300  # a prefix, never all
    return error


@pytest.mark.parametrize("want", ["file", "dir"])
def test_a_nul_byte_is_an_invalid_path(tmp_path: Path, want: str) -> None:
    error = _refused(_policy(tmp_path), "pkg/mod\x00.py", want)
    assert error.code == "VAL_INVALID_PATH"
    assert "NUL byte" in error.message and "\x00" not in error.message
    assert error.details["provided"] == "pkg/mod\\x00.py"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("a" * 300 + ".py", "name of 303 bytes"),
        ("pkg/" + "é" * 200, "name of 400 bytes"),  # NAME_MAX counts bytes, not characters
        ("/".join(["abcdefgh"] * 460), "over the 4095-byte limit"),  # short names, long path
    ],
)
def test_names_over_name_max_and_paths_over_path_max_are_too_long(
    tmp_path: Path, raw: str, problem: str
) -> None:
    error = _refused(_policy(tmp_path), raw)
    assert error.code == "VAL_PATH_TOO_LONG" and problem in error.message
    assert "255" in error.suggestion


def test_unresolvable_paths_are_invalid(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert "home directory" in _refused(policy, "~no_such_user_here/x.py").message
    (tmp_path / "root" / "loop.py").symlink_to("loop.py")
    assert _refused(policy, "loop.py").code == "VAL_INVALID_PATH"


def test_special_files_are_not_regular_files(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    os.mkfifo(tmp_path / "root" / "pipe.py")
    error = _refused(policy, "pipe.py")
    assert error.code == "VAL_NOT_REGULAR_FILE" and "FIFO" in error.message
    assert _refused(policy, "pkg").code == "VAL_NOT_A_FILE"


def test_an_oversized_file_names_the_limit_and_its_setting(tmp_path: Path) -> None:
    policy = _policy(tmp_path, max_file_bytes=1_000)
    big = tmp_path / "root" / "big.py"
    big.write_bytes(b"#" * 1_001)
    with pytest.raises(ValidationError) as info:
        policy.read_input(
            policy.resolve("big.py", field="file_path", want="file"), "big.py", field="file_path"
        )
    error = info.value
    assert error.code == "VAL_FILE_TOO_LARGE" and "1,000-byte limit" in error.message
    assert "MEMORY_INDEXER__MAX_FILE_BYTES" in error.suggestion
    assert error.details["size_bytes"] == 1_001 and error.details["max_file_bytes"] == 1_000


def test_a_swap_between_the_check_and_the_read_is_refused(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "mod.py").write_text("def secret(): pass\n")
    path = policy.resolve("pkg/mod.py", field="file_path", want="file")
    (tmp_path / "root" / "pkg").rename(tmp_path / "pkg.old")
    (tmp_path / "root" / "pkg").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(ValidationError) as info:
        policy.read_input(path, "pkg/mod.py", field="file_path")
    assert info.value.code == "VAL_PATH_OUTSIDE_ROOTS"
    assert "symlink" in info.value.message


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    path = policy.resolve("pkg/mod.py", field="file_path", want="file")
    path.unlink()
    os.mkfifo(path)
    with fifo_guard(path) as unblocked, pytest.raises(ValidationError) as info:
        policy.read_input(path, "pkg/mod.py", field="file_path")
    assert unblocked == []
    assert info.value.code == "VAL_NOT_REGULAR_FILE"
