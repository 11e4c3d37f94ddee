"""A transaction batch into an acid table on S3 (moto's server on loopback; no Spark): each
transaction writes complete files in a ``delta_W_W`` (and ``delete_delta_W_W``) of its own,
as Hive's streaming writer leaves batches of one transaction, because an S3 object appears
only once closed and cannot grow (issue 46). On a local disk the batch shares one growing
``delta_FIRST_LAST`` (tests/streaming)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow.orc as paorc
import pytest

from tests.support.s3_server import S3Server
from versioned import streaming as vs
from versioned.api.catalog import Catalog, connect

_DELTA = re.compile(
    r"^p=a/(delete_)?delta_(\d{7})_(\d{7})/(bucket_\d{5}|_orc_acid_version|_key_bloom_\d{5})$"
)


@pytest.fixture
def cat(tmp_path: Path) -> Iterator[Catalog]:
    server = S3Server.start(tmp_path / "s3", record=False)
    try:
        server.create_bucket("lake")
        with pytest.MonkeyPatch.context() as env:
            for key, value in server.env().items():
                env.setenv(key, value)
            catalog = connect(catalog=f"sqlite:///{tmp_path}/c.db", warehouse="s3://lake/wh")
            yield catalog
            catalog.close()
    finally:
        server.stop()


def test_each_transaction_of_a_batch_commits_complete_files_of_its_own(cat: Catalog) -> None:
    t = cat.create_table(
        "db.t",
        columns="id BIGINT, amt DOUBLE, p STRING",
        primary_key="id",
        partition_by="p",
        layout="acid",
        bucket_by="id",
        buckets=2,
    )
    endpoint = vs.EndPoint(cat, "db.t", ["a"])
    writer = vs.DelimitedInputWriter(["id", "amt"], ",", endpoint=endpoint)
    fileio = cat.engine_context.fileio
    seen: list[set[int]] = []
    with (
        endpoint.connect(create_partition=True) as conn,
        conn.fetch_transaction_batch(3, writer) as batch,
    ):
        for n in range(3):
            batch.begin_next_transaction()
            batch.write_many([f"{k},{n}.0" for k in range(n, n + 3)])  # 2 keys replaced
            batch.commit()
            files = t.snapshot().files
            write_ids = set()
            for f in files:
                match = _DELTA.match(f.path)
                assert match, f.path
                assert match[2] == match[3]  # delta_W_W: one transaction each
                write_ids.add(int(match[2]))
                assert not f.stats.get("stream_open"), f.path
                where = f"{t.info.location}/{f.path}"
                assert fileio.size(where) == f.size_bytes, f.path
                if match[4].startswith("bucket_"):  # a whole ORC file, as committed
                    with fileio.open_input(where) as handle:
                        assert paorc.ORCFile(handle).nrows == f.row_count
            seen.append(write_ids)
    assert [len(w) for w in seen] == [1, 2, 3]  # each commit is readable at once
    assert [c.operation for c in t.history()] == ["stream"] * 3  # no closing commit
    inserted = [f for f in t.snapshot().files if re.search(r"/delta_.*/bucket_", f.path)]
    deleted = [f for f in t.snapshot().files if "/delete_delta_" in f.path and "/bucket_" in f.path]
    assert sum(f.row_count for f in inserted) == 9 and sum(f.row_count for f in deleted) == 4
