"""The rows a change stream emits for one commit, from the images of the keys it touched.

A layout supplies two Arrow tables in the stream's columns: the *pre-images* (the rows live
just before the commit, of the keys it touched) and the *post-images* (the rows it wrote).
Matched by record key (`TableSpec.record_key`, so a table-wide key that moved partition is
one key), they become ``insert`` (no pre-image), ``delete`` (no post-image: the pre-image's
values), or ``update_preimage`` + ``update_postimage`` (both, when some value differs). A key
whose values are all equal is left out, as `Table.changes` leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.keys.encoding import encode_key_array
from versioned.layouts.change_task import CommitStamp, Images
from versioned.schema import Column
from versioned.values.arrow_types import arrow_type

CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"
COMMIT_SEQ = "_commit_seq"
CHANGE_COLUMNS = (CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP, COMMIT_SEQ)
INSERT = "insert"
UPDATE_PREIMAGE = "update_preimage"
UPDATE_POSTIMAGE = "update_postimage"
DELETE = "delete"
TIMESTAMP = pa.timestamp("us", tz="UTC")


def output_schema(columns: Sequence[Column]) -> pa.Schema:
    """The Arrow schema of the stream: the table's columns (nullable) and the change
    columns."""
    fields = [pa.field(c.name, arrow_type(c.type)) for c in columns]
    fields += [
        pa.field(CHANGE_TYPE, pa.string()),
        pa.field(COMMIT_VERSION, pa.int64()),
        pa.field(COMMIT_TIMESTAMP, TIMESTAMP),
        pa.field(COMMIT_SEQ, pa.int64()),
    ]
    return pa.schema(fields)


def change_rows(
    images: Images,
    *,
    record_key: Sequence[str],
    stamp: CommitStamp,
    schema: pa.Schema,
) -> pa.Table:
    """The commit's change rows in ``schema`` (see the module docstring): deletes, then
    update pre- and post-images in pairs, then inserts."""
    names = [n for n in schema.names if n not in CHANGE_COLUMNS]
    before = _first_per_key(images.before.select(names), record_key)
    after = images.after.select(names)
    before_keys = encode_key_array(before, record_key)
    after_keys = encode_key_array(after, record_key)
    match = pc.index_in(after_keys, value_set=before_keys)
    matched = pc.is_valid(match)
    deleted = before.filter(pc.invert(pc.is_in(before_keys, value_set=after_keys)))
    inserted = after.filter(pc.invert(matched))
    post = after.filter(matched)
    pre = before.take(match.filter(matched))
    changed = pc.invert(_same_values(pre, post, [n for n in names if n not in record_key]))
    pre, post = pre.filter(changed), post.filter(changed)
    n = pre.num_rows
    pairs = pa.concat_tables([pre, post]).take(
        pa.array(np.column_stack([np.arange(n), np.arange(n) + n]).ravel())
    )
    kinds = [DELETE] * deleted.num_rows + [UPDATE_PREIMAGE, UPDATE_POSTIMAGE] * n
    kinds += [INSERT] * inserted.num_rows
    rows = pa.concat_tables([deleted, pairs, inserted])
    count = rows.num_rows
    columns = [rows.column(name) for name in names] + [
        pa.array(kinds, pa.string()),
        pa.repeat(pa.scalar(stamp.version, pa.int64()), count),
        pa.repeat(pa.scalar(int(stamp.committed_at * 1_000_000), pa.int64()), count).cast(
            TIMESTAMP
        ),
        pa.repeat(pa.scalar(stamp.seq, pa.int64()), count),
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _first_per_key(rows: pa.Table, key: Sequence[str]) -> pa.Table:
    """The first row of each key (a row found in two files of a snapshot is one row)."""
    if rows.num_rows < 2:
        return rows
    keys = encode_key_array(rows, key)
    first = pc.index_in(keys, value_set=keys)
    keep = pc.equal(first, pa.array(np.arange(rows.num_rows, dtype=np.int32)))
    return rows if pc.all(keep).as_py() else rows.filter(keep)


def _same_values(a: pa.Table, b: pa.Table, names: Sequence[str]) -> pa.Array:
    """Per row: whether every column of ``names`` holds the same value in ``a`` and ``b``,
    with Spark's ``<=>``: nulls equal nulls, and NaN equals NaN."""
    same = pa.array(np.ones(a.num_rows, dtype=bool))
    for name in names:
        x, y = a.column(name), b.column(name)
        both_null = pc.and_(pc.is_null(x), pc.is_null(y))
        equal = pc.fill_null(pc.equal(x, y), False)
        if pa.types.is_floating(x.type):
            equal = pc.or_(equal, pc.fill_null(pc.and_(pc.is_nan(x), pc.is_nan(y)), False))
        same = pc.and_(same, pc.or_(equal, both_null))
    return same
