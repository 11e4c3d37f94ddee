"""User metadata appended to a finished ORC file's footer (issue 28 item 2): the rows stay,
the items are there for pyarrow's and pyorc's readers (Spark's and Hive's read them in
tests/layouts/acid/engine/test_acid_compaction.py and tests/interop), compressed or not,
over several stripes."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.orc as paorc
import pyorc
import pytest

from versioned.layouts.acid.acid_metadata import AcidStats
from versioned.layouts.acid.bucket_codec import RecordIdentifier
from versioned.layouts.acid.errors import AcidFileError
from versioned.layouts.acid.orc_files import read_bucket_file
from versioned.layouts.acid.orc_footer import with_acid_metadata, with_user_metadata


def _events(n: int) -> pa.Table:
    ops = [2 if i % 3 == 0 else 0 for i in range(n)]
    return pa.table(
        {
            "operation": pa.array(ops, pa.int32()),
            "originalTransaction": pa.array([1 + i // 1000 for i in range(n)], pa.int64()),
            "bucket": pa.array([536870912] * n, pa.int32()),
            "rowId": pa.array([i % 1000 for i in range(n)], pa.int64()),
            "currentTransaction": pa.array([7] * n, pa.int64()),
            "row": pa.array(
                [{"id": i, "name": f"n{i}"} for i in range(n)],
                pa.struct([("id", pa.int64()), ("name", pa.string())]),
            ),
        }
    )


def _orc(table: pa.Table, **options: object) -> bytes:
    sink = io.BytesIO()
    paorc.write_table(table, sink, stripe_size=1024, batch_size=256, **options)
    return sink.getvalue()


@pytest.mark.parametrize("compression", ["uncompressed", "zlib", "zstd", "snappy"])
def test_items_join_the_footer_and_the_rows_stay(compression: str) -> None:
    table = _events(30_000)
    data = _orc(table, compression=compression)
    assert paorc.ORCFile(pa.BufferReader(data)).nstripes > 1
    patched = with_user_metadata(data, {"a.key": b"one", "b.key": b"\x00\xff two"})
    reader = paorc.ORCFile(pa.BufferReader(patched))
    assert reader.read().equals(table)
    assert reader.metadata[b"a.key"] == b"one" and reader.metadata[b"b.key"] == b"\x00\xff two"
    with_pyorc = pyorc.Reader(io.BytesIO(patched))
    assert with_pyorc.user_metadata["a.key"] == b"one" and len(with_pyorc) == 30_000


def test_acid_metadata_names_each_stripe_s_last_row_id_and_counts_the_events() -> None:
    table = _events(30_000)
    data = _orc(table, compression="zlib")
    stripes = paorc.ORCFile(pa.BufferReader(data))
    lasts = []
    for i in range(stripes.nstripes):
        batch = stripes.read_stripe(i)
        last = batch.num_rows - 1
        lasts.append(
            RecordIdentifier(
                batch.column("originalTransaction")[last].as_py(),
                batch.column("bucket")[last].as_py(),
                batch.column("rowId")[last].as_py(),
            )
        )
    assert len(lasts) > 1
    read = read_bucket_file(with_acid_metadata(data))
    assert read.key_index == tuple(lasts)
    assert read.key_index[-1] == RecordIdentifier(30, 536870912, 999)
    assert read.stats == AcidStats(inserts=20_000, updates=0, deletes=10_000)
    assert read.acid_version == "2"
    assert read.events.num_rows == 30_000


def test_a_file_that_is_not_orc_is_refused() -> None:
    with pytest.raises(AcidFileError, match="not an ORC file"):
        with_user_metadata(b"PAR1 not orc", {"k": b"v"})
