"""`FileIO` on an S3 server behind the fault proxy (`tests.support.s3_fault_proxy`): each fault
of an object store either passes unseen (the client retries) or ends the call with one clear
line, and never leaves a partial object at a file's name (issue 46). The mixed-load history
check under these faults, with Spark, is `make faults-s3` (tests/faults/test_history_s3.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.s3_fault_proxy import CUT_UPLOAD, LOST_REPLY, SLOW_DOWN, SLOW_GET, S3FaultProxy
from tests.support.s3_server import S3Server
from versioned.errors import StorageError
from versioned.storage.filesystem import FileIO

BIG = os.urandom(12 * 1024 * 1024)
"""Past pyarrow's first part (10 MiB): written as a multipart upload of two parts."""


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3FaultProxy]:
    server = S3Server.start(tmp_path_factory.mktemp("s3"), record=False)
    proxy = S3FaultProxy(server.endpoint)
    try:
        server.create_bucket("lake")
        with pytest.MonkeyPatch.context() as env:
            for key, value in server.env().items():
                env.setenv(key, value)
            env.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
            yield proxy
    finally:
        proxy.close()
        server.stop()


def _fileio(name: str) -> FileIO:
    return FileIO.for_root(f"s3://lake/{name}")


def test_requests_pass_through_the_proxy_unchanged(proxy: S3FaultProxy) -> None:
    fio = _fileio("plain")
    fio.write_bytes_atomic("t/a.bin", b"abc")
    fio.write_bytes_atomic("t/big.bin", BIG)
    assert fio.read_bytes("t/a.bin") == b"abc" and fio.read_bytes("t/big.bin") == BIG
    assert fio.size("t/big.bin") == len(BIG)
    assert [f.path for f in fio.list_files("t")] == ["t/a.bin", "t/big.bin"]
    # the small file in one PUT; the big one (past a part) in a multipart upload of two parts
    assert proxy.requests["PutObject"] >= 1
    assert proxy.requests["UploadPart"] >= 2 and proxy.requests["CompleteMultipartUpload"] >= 1


def test_a_burst_of_slow_down_answers_is_retried_unseen(proxy: S3FaultProxy) -> None:
    fio = _fileio("slow-down")
    before = proxy.served[SLOW_DOWN]
    proxy.slow_down(2)
    fio.write_bytes_atomic("t/a.bin", b"after the burst")
    assert proxy.served[SLOW_DOWN] == before + 2
    assert fio.read_bytes("t/a.bin") == b"after the burst"


def test_a_long_burst_ends_the_call_with_one_line(proxy: S3FaultProxy) -> None:
    fio = _fileio("long-burst")
    proxy.slow_down(50)
    try:
        with pytest.raises(StorageError) as raised:
            fio.write_bytes_atomic("t/a.bin", b"x")
    finally:
        proxy.disarm()
    assert "\n" not in str(raised.value) and "t/a.bin" in str(raised.value)
    assert not fio.exists("t/a.bin")


def test_a_lost_reply_to_a_stored_write_is_retried(proxy: S3FaultProxy) -> None:
    fio = _fileio("lost-reply")
    before = proxy.served[LOST_REPLY]
    proxy.lose_write_reply()
    fio.write_bytes_atomic("t/a.bin", b"stored once")
    assert proxy.served[LOST_REPLY] == before + 1
    assert fio.read_bytes("t/a.bin") == b"stored once"


def test_a_part_cut_in_the_middle_leaves_the_file_whole_or_absent(proxy: S3FaultProxy) -> None:
    fio = _fileio("cut")
    before = proxy.served[CUT_UPLOAD]
    proxy.cut_upload()
    try:
        fio.write_bytes_atomic("t/big.bin", BIG)
    except StorageError as err:
        assert "\n" not in str(err)
        assert not fio.exists("t/big.bin")
    else:
        assert fio.read_bytes("t/big.bin") == BIG
    assert proxy.served[CUT_UPLOAD] == before + 1


def test_a_small_file_cut_in_the_middle_is_whole_or_absent(proxy: S3FaultProxy) -> None:
    """A file smaller than a part goes in one PutObject; its body cut halfway."""
    fio = _fileio("cut-small")
    before, parts = proxy.served[CUT_UPLOAD], proxy.requests["UploadPart"]
    proxy.cut_upload()
    try:
        fio.write_bytes_atomic("t/small.bin", b"s" * 5000)
    except StorageError as err:
        assert "\n" not in str(err)
        assert not fio.exists("t/small.bin")
    else:
        assert fio.read_bytes("t/small.bin") == b"s" * 5000
    assert proxy.served[CUT_UPLOAD] == before + 1
    assert proxy.requests["UploadPart"] == parts  # one PUT, no multipart upload


def test_a_slow_get_still_reads_the_whole_file(proxy: S3FaultProxy) -> None:
    fio = _fileio("slow-get")
    fio.write_bytes_atomic("t/a.bin", b"late but whole")
    before = proxy.served[SLOW_GET]
    proxy.slow_gets(1, delay_s=1.0)
    assert fio.read_bytes("t/a.bin") == b"late but whole"
    assert proxy.served[SLOW_GET] == before + 1


def test_a_slow_down_answer_to_a_head_leaves_the_connection_usable(proxy: S3FaultProxy) -> None:
    """An answer to HEAD has no body: the proxy once sent the error's XML after it, which the
    next answer on that connection then began with (a Java client waited for ever)."""
    fio = _fileio("head")
    fio.write_bytes_atomic("t/a.bin", b"12345")
    before = proxy.served[SLOW_DOWN]
    proxy.slow_down(1)
    assert fio.size("t/a.bin") == 5
    assert proxy.served[SLOW_DOWN] == before + 1
    for _ in range(3):  # later requests, on the kept-alive connection
        assert fio.size("t/a.bin") == 5 and fio.read_bytes("t/a.bin") == b"12345"
