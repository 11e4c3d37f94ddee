"""FileIO: atomic writes, containment of every path in the root, and the read record."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from versioned.errors import StorageError, UnsafePathError
from versioned.storage.filesystem import TMP_PREFIX, FileIO

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fio(warehouse: Path) -> Iterator[FileIO]:
    FileIO.reset_opened_files()
    yield FileIO.for_root(str(warehouse))
    FileIO.reset_opened_files()


def test_write_then_read_round_trips_and_creates_parents(fio: FileIO, warehouse: Path) -> None:
    fio.write_bytes_atomic("db.db/t/p=1/version_id=3/f.bin", b"hello")
    assert (warehouse / "db.db/t/p=1/version_id=3/f.bin").read_bytes() == b"hello"
    assert fio.read_bytes("db.db/t/p=1/version_id=3/f.bin") == b"hello"
    assert fio.exists("db.db/t/p=1/version_id=3/f.bin")
    assert fio.exists("db.db/t")
    assert not fio.exists("db.db/t/nope")
    assert fio.size("db.db/t/p=1/version_id=3/f.bin") == 5


def test_write_replaces_an_existing_file(fio: FileIO) -> None:
    fio.write_bytes_atomic("a/f", b"old content")
    fio.write_bytes_atomic("a/f", b"new")
    assert fio.read_bytes("a/f") == b"new"
    assert [s.path for s in fio.list_files("a")] == ["a/f"]


def test_file_uri_root_is_the_same_directory(warehouse: Path) -> None:
    fio = FileIO.for_root(f"file://{warehouse}")
    fio.write_bytes_atomic("x/y", b"1")
    assert (warehouse / "x/y").read_bytes() == b"1"
    assert fio.full_path("x/y") == f"{warehouse}/x/y"
    assert fio.full_path("") == str(warehouse)


def test_relative_root_becomes_absolute(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(warehouse.parent)
    fio = FileIO.for_root(warehouse.name)
    assert fio.full_path("a/b") == f"{warehouse}/a/b"


def test_full_path_normalises_dot_and_empty_segments(fio: FileIO, warehouse: Path) -> None:
    assert fio.full_path("./a//b/./c") == f"{warehouse}/a/b/c"


UNSAFE = ["../x", "/etc/passwd", "a/../../x", "a/../b", "..", "x\x00y", "a\\..\\x", "s3://b/k"]


@pytest.mark.parametrize("rel", UNSAFE)
def test_unsafe_relative_paths_are_rejected_by_every_operation(fio: FileIO, rel: str) -> None:
    ops: list[Callable[[], Any]] = [
        lambda: fio.resolve_inside(rel),
        lambda: fio.read_bytes(rel),
        lambda: fio.write_bytes_atomic(rel, b"x"),
        lambda: fio.exists(rel),
        lambda: fio.size(rel),
        lambda: fio.list_files(rel),
        lambda: fio.delete_file(rel, missing_ok=True),
        lambda: fio.delete_dir(rel, missing_ok=True),
        lambda: fio.delete_empty_dir(rel, empty_subdirs=True),
        lambda: fio.makedirs(rel),
        lambda: fio.full_path(rel),
    ]
    for op in ops:
        with pytest.raises(UnsafePathError) as info:
            op()
        assert getattr(info.value, "path", None) == rel
    assert FileIO.opened_files == []


def test_symlinked_directory_escaping_the_root_is_rejected(fio: FileIO, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"s")
    (Path(fio.root) / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        fio.read_bytes("link/secret")
    with pytest.raises(UnsafePathError):
        fio.write_bytes_atomic("link/new", b"x")
    with pytest.raises(UnsafePathError):
        fio.write_bytes_atomic("link/deeper/new", b"x")
    with pytest.raises(UnsafePathError):
        fio.delete_dir("link")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_symlinked_file_escaping_the_root_is_rejected(fio: FileIO, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"s")
    (Path(fio.root) / "f").symlink_to(secret)
    with pytest.raises(UnsafePathError):
        fio.read_bytes("f")


def test_symlinks_inside_the_root_and_a_symlinked_root_are_allowed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "data").mkdir(parents=True)
    (tmp_path / "root").symlink_to(real, target_is_directory=True)
    fio = FileIO.for_root(str(tmp_path / "root"))
    (real / "alias").symlink_to(real / "data", target_is_directory=True)
    fio.write_bytes_atomic("alias/f", b"ok")
    assert (real / "data/f").read_bytes() == b"ok"


def test_reads_are_recorded_per_instance_and_process_wide(fio: FileIO, warehouse: Path) -> None:
    other = FileIO.for_root(str(warehouse))
    fio.write_bytes_atomic("a", b"1")
    fio.write_bytes_atomic("b", b"2")
    fio.exists("a")
    fio.size("a")
    fio.list_files()
    assert FileIO.opened_files == [] and fio.opened == []

    fio.read_bytes("a")
    with fio.open_input("b") as handle:
        assert handle.read() == b"2"
    other.read_bytes("a")
    fio.copy_file("a", other, "c")
    assert fio.opened == ["a", "b", "a"]
    assert other.opened == ["a"]
    assert FileIO.opened_files == ["a", "b", "a", "a"]

    FileIO.reset_opened_files()
    assert FileIO.opened_files == []
    assert fio.opened == ["a", "b", "a"]


def test_failed_open_is_not_recorded_and_raises_storage_error(fio: FileIO) -> None:
    with pytest.raises(StorageError) as info:
        fio.read_bytes("missing")
    assert getattr(info.value, "not_found", False) is True
    assert FileIO.opened_files == []


def test_list_files_gives_relative_paths_sizes_and_mtimes(fio: FileIO) -> None:
    fio.write_bytes_atomic("t/v=1/_index/i.parquet", b"abc")
    fio.write_bytes_atomic("t/v=1/part-0.parquet", b"abcdef")
    fio.write_bytes_atomic("t/top", b"")
    files = fio.list_files("t")
    assert [(f.path, f.size) for f in files] == [
        ("t/top", 0),
        ("t/v=1/_index/i.parquet", 3),
        ("t/v=1/part-0.parquet", 6),
    ]
    assert all(f.mtime > 1e9 for f in files)
    assert [f.path for f in fio.list_files("t", recursive=False)] == ["t/top"]
    assert fio.list_files("nope") == []
    assert [f.path for f in fio.list_files()] == [f.path for f in files]


def test_delete_file_and_dir(fio: FileIO) -> None:
    fio.write_bytes_atomic("d/x/f", b"1")
    fio.delete_file("d/x/f")
    assert not fio.exists("d/x/f")
    with pytest.raises(StorageError):
        fio.delete_file("d/x/f")
    fio.delete_file("d/x/f", missing_ok=True)
    fio.delete_dir("d")
    assert not fio.exists("d")
    with pytest.raises(StorageError):
        fio.delete_dir("d")
    fio.delete_dir("d", missing_ok=True)


def test_the_root_itself_cannot_be_deleted(fio: FileIO) -> None:
    for rel in ("", ".", "./"):
        with pytest.raises(UnsafePathError):
            fio.delete_dir(rel)
    assert Path(fio.root).is_dir()


def test_the_root_itself_cannot_be_written(fio: FileIO, warehouse: Path) -> None:
    for rel in ("", "."):
        with pytest.raises(UnsafePathError):
            fio.write_bytes_atomic(rel, b"x")
    assert warehouse.is_dir() and list(warehouse.parent.glob(f"{TMP_PREFIX}*")) == []


def test_size_of_missing_file_or_directory_raises(fio: FileIO) -> None:
    fio.makedirs("some/dir")
    assert fio.exists("some/dir")
    for rel in ("some/dir", "some/missing"):
        with pytest.raises(StorageError):
            fio.size(rel)


def test_copy_file_to_another_root(fio: FileIO, tmp_path: Path) -> None:
    data = os.urandom(3 << 20)
    fio.write_bytes_atomic("src/f", data)
    dst = FileIO.for_root(str(tmp_path / "export"))
    fio.copy_file("src/f", dst, "coll/f")
    assert (tmp_path / "export/coll/f").read_bytes() == data


def test_error_inside_atomic_output_leaves_no_file(fio: FileIO, warehouse: Path) -> None:
    with pytest.raises(RuntimeError), fio.open_output_atomic("d/f") as out:
        out.write(b"partial")
        raise RuntimeError("boom")
    assert not fio.exists("d/f")
    assert list((warehouse / "d").iterdir()) == []


_WRITER = textwrap.dedent(
    """
    import sys, time
    from versioned.storage.filesystem import FileIO
    root, rel, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    fio = FileIO.for_root(root)
    chunk = bytes(range(256)) * 4096  # 1 MiB
    with fio.open_output_atomic(rel) as out:
        for i in range(chunks):
            out.write(chunk)
            if i == 0:
                out.flush()
                print("STARTED", flush=True)
                time.sleep(0.3)
    print("DONE", flush=True)
    """
)


def _writer(root: Path, rel: str, chunks: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(root), rel, str(chunks)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


@pytest.mark.slow
@pytest.mark.parametrize("existing", [None, b"old complete content"])
def test_writer_killed_mid_write_leaves_old_state_and_a_hidden_temp_file(
    warehouse: Path, existing: bytes | None
) -> None:
    target = warehouse / "t/version_id=1/big.bin"
    if existing is not None:
        target.parent.mkdir(parents=True)
        target.write_bytes(existing)
    proc = _writer(warehouse, "t/version_id=1/big.bin", chunks=10_000)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "STARTED"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:  # never leave a 10 GB writer running
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    if existing is None:
        assert not target.exists()
    else:
        assert target.read_bytes() == existing
    leftovers = [p for p in target.parent.iterdir() if p != target]
    assert len(leftovers) == 1
    assert leftovers[0].name.startswith(TMP_PREFIX)
    assert leftovers[0].stat().st_size >= 1 << 20  # the partial bytes went somewhere hidden
    listed = FileIO.for_root(str(warehouse)).list_files("t")
    assert any(f.path.split("/")[-1].startswith(TMP_PREFIX) for f in listed)


@pytest.mark.slow
def test_writer_that_finishes_leaves_exactly_the_complete_file(warehouse: Path) -> None:
    proc = _writer(warehouse, "t/big.bin", chunks=40)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    data = (warehouse / "t/big.bin").read_bytes()
    expected = hashlib.sha256(bytes(range(256)) * 4096 * 40).hexdigest()
    assert hashlib.sha256(data).hexdigest() == expected
    assert [p.name for p in (warehouse / "t").iterdir()] == ["big.bin"]


def test_delete_empty_dir_never_deletes_a_file(fio: FileIO) -> None:
    fio.makedirs("t/p=a/version_id=1")
    fio.write_bytes_atomic("t/p=b/version_id=2/f", b"1")
    assert not fio.delete_empty_dir("t/p=a")  # holds an (empty) directory
    assert fio.delete_empty_dir("t/p=a", empty_subdirs=True)
    assert not fio.exists("t/p=a")
    assert not fio.delete_empty_dir("t/p=b", empty_subdirs=True)
    assert fio.read_bytes("t/p=b/version_id=2/f") == b"1"
    assert fio.delete_empty_dir("t/missing")
    for rel in ("", "."):
        with pytest.raises(UnsafePathError):
            fio.delete_empty_dir(rel)
    for rel in ("../x", "/etc", "a/../../x", "s3://b/k"):
        with pytest.raises(UnsafePathError):
            fio.delete_empty_dir(rel, empty_subdirs=True)


def test_delete_empty_dir_keeps_a_symlink_and_what_it_points_to(
    fio: FileIO, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "empty").mkdir(parents=True)
    fio.makedirs("t/p=a")
    (Path(fio.root) / "t/p=a/link").symlink_to(outside, target_is_directory=True)
    assert not fio.delete_empty_dir("t/p=a", empty_subdirs=True)
    assert (outside / "empty").is_dir()
    with pytest.raises(UnsafePathError):
        fio.delete_empty_dir("t/p=a/link")
