"""An S3 warehouse's settings, and `FileIO` on a real S3 server on loopback (moto's): files
written in one PUT each, with no temporary object and no copy, read back, listed and deleted
(issue 46)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.s3_server import REGION, S3Server, serving_bucket
from versioned.errors import StorageError
from versioned.storage.filesystem import FileIO
from versioned.storage.object_store import is_s3, s3_location


def test_an_s3_root_takes_the_aws_settings_for_both_sides() -> None:
    env = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000/", "AWS_REGION": "eu-west-3"}
    location = s3_location("s3://lake/warehouse/", env)
    assert (location.bucket, location.prefix, location.base) == (
        "lake",
        "warehouse",
        "lake/warehouse",
    )
    assert location.spark_root == "s3a://lake/warehouse"
    assert location.spark_conf() == {
        "spark.hadoop.fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3a.bucket.lake.endpoint.region": "eu-west-3",
        "spark.hadoop.fs.s3a.bucket.lake.endpoint": "http://127.0.0.1:9000",
        "spark.hadoop.fs.s3a.bucket.lake.path.style.access": "true",
        "spark.hadoop.fs.s3a.bucket.lake.connection.ssl.enabled": "false",
    }
    assert location.filesystem().region == "eu-west-3"
    # the S3-specific endpoint wins; without one, AWS itself (no path-style, no endpoint)
    both = {"AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_S3": "https://b:2"}
    assert s3_location("s3a://lake", both).endpoint == "https://b:2"
    aws = s3_location("s3://lake/w", {"AWS_DEFAULT_REGION": "us-west-2"})
    assert aws.endpoint is None and aws.region == "us-west-2"
    assert not any("endpoint" in k and "region" not in k for k in aws.spark_conf())
    assert is_s3("S3A://lake") and is_s3("s3://x") and not is_s3("/tmp/x") and not is_s3("gs://x")


@pytest.mark.parametrize(
    "root, env",
    [
        ("s3:///nobucket", {}),
        ("s3://lake/w?endpoint=x", {}),
        ("s3://lake/w", {"AWS_ENDPOINT_URL": "127.0.0.1:9000"}),
        ("s3://lake/w", {"AWS_ENDPOINT_URL": "ftp://127.0.0.1:9000"}),
    ],
)
def test_a_bad_root_or_endpoint_is_one_clear_error(root: str, env: dict[str, str]) -> None:
    with pytest.raises(StorageError) as raised:
        s3_location(root, env)
    assert "\n" not in str(raised.value)


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with serving_bucket(tmp_path_factory.mktemp("s3")) as server:
        yield server


def test_files_are_written_once_in_place_read_listed_and_deleted(s3: S3Server) -> None:
    fio = FileIO.for_root("s3://lake/wh")
    assert fio.root == "s3a://lake/wh" and fio.object_store is not None
    assert fio.full_path("t/version_id=1/a.bin") == "s3a://lake/wh/t/version_id=1/a.bin"
    s3.reset_log()
    fio.write_bytes_atomic("t/version_id=1/a.bin", b"abc" * 1000)
    counts = s3.counts()
    assert counts["objects"] == 1, s3.requests()  # the file, once
    assert counts["CopyObject"] == 0 and counts["DeleteObject"] == 0  # no temporary object
    assert fio.read_bytes("t/version_id=1/a.bin") == b"abc" * 1000
    assert fio.size("t/version_id=1/a.bin") == 3000 and fio.exists("t/version_id=1/a.bin")
    fio.write_bytes_atomic("t/version_id=2/b.bin", b"x")
    assert [f.path for f in fio.list_files("t")] == ["t/version_id=1/a.bin", "t/version_id=2/b.bin"]
    fio.delete_file("t/version_id=1/a.bin")
    assert not fio.exists("t/version_id=1/a.bin")
    assert [r.kind for r in s3.requests()].count("CopyObject") == 0


def test_a_parquet_file_written_through_the_atomic_stream_reads_back(s3: S3Server) -> None:
    fio = FileIO.for_root("s3a://lake/wh2")
    table = pa.table({"id": list(range(1000)), "v": [str(i) for i in range(1000)]})
    with fio.open_output_atomic("t/p=1/version_id=3/part.parquet") as out:
        pq.write_table(table, out)
    with fio.open_input("t/p=1/version_id=3/part.parquet") as handle:
        assert pq.read_table(handle).equals(table)


def test_a_file_and_a_folder_move_object_by_object(s3: S3Server) -> None:
    """S3 has no rename: a file is copied and deleted; a folder (an acid compaction's
    ``base_N``) moves each object under it."""
    fio = FileIO.for_root("s3://lake/moves")
    fio.write_bytes_atomic("t/a.bin", b"a")
    for name in ("bucket_00000", "sub/bucket_00001"):
        fio.write_bytes_atomic(f"t/_staging/base_3/{name}", name.encode())
    s3.reset_log()
    fio.move("t/a.bin", "t/p=1/a.bin")
    fio.move("t/_staging/base_3", "t/p=1/base_3")
    assert [f.path for f in fio.list_files("t")] == [
        "t/p=1/a.bin",
        "t/p=1/base_3/bucket_00000",
        "t/p=1/base_3/sub/bucket_00001",
    ]
    assert fio.read_bytes("t/p=1/base_3/sub/bucket_00001") == b"sub/bucket_00001"
    assert s3.counts()["CopyObject"] == 3  # one per object: what a rename costs on S3


def test_a_failed_write_leaves_no_object(s3: S3Server) -> None:
    fio = FileIO.for_root("s3://lake/wh3")
    s3.reset_log()
    with pytest.raises(RuntimeError), fio.open_output_atomic("t/half.bin") as out:
        out.write(b"half of it")
        raise RuntimeError("the writer died")
    assert not fio.exists("t/half.bin")
    assert s3.counts()["objects"] == 0 and s3.counts()["CreateMultipartUpload"] == 0


def test_the_server_log_names_the_operations(s3: S3Server, tmp_path: Path) -> None:
    fio = FileIO.for_root("s3://lake/wh4")
    fio.write_bytes_atomic("a/b.bin", b"1")
    s3.reset_log()
    fio.move("a/b.bin", "a/c.bin")  # a rename on S3 is a copy and a delete
    kinds = s3.counts()
    assert kinds["CopyObject"] == 1 and kinds["DeleteObject"] >= 1
    s3.reset_log()
    fio.list_files("a")
    assert s3.counts()["ListObjects"] >= 1
    assert REGION == "us-east-1"
