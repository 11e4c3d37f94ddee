"""BucketCodec V1 and ROW__ID ordering, as Hive encodes and compares them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from versioned.layouts.acid.bucket_codec import (
    BucketProperty,
    RecordIdentifier,
    decode_bucket_property,
    encode_bucket_properties,
    encode_bucket_property,
)
from versioned.layouts.acid.errors import BucketCodecError


def test_published_properties() -> None:
    assert encode_bucket_property(0) == 536870912
    assert encode_bucket_property(1) == 536936448
    assert encode_bucket_property(0, 0) == 536870912
    assert encode_bucket_property(4095, 4095) == (1 << 29) | (4095 << 16) | 4095


def test_no_statement_encodes_as_statement_zero() -> None:
    assert encode_bucket_property(3, None) == encode_bucket_property(3, -1)
    assert encode_bucket_property(3, -1) == encode_bucket_property(3, 0)


def test_encode_decode_round_trip() -> None:
    rng = random.Random(7)
    for _ in range(500):
        bucket, statement = rng.randint(0, 4095), rng.randint(0, 4095)
        prop = encode_bucket_property(bucket, statement)
        assert decode_bucket_property(prop) == BucketProperty(1, bucket, statement)
        assert decode_bucket_property(prop).encode() == prop


def test_version_zero_property_is_the_bucket_id() -> None:
    assert decode_bucket_property(5) == BucketProperty(0, 5, 0)
    assert BucketProperty(0, 5, 0).encode() == 5


@pytest.mark.parametrize(
    ("bucket", "statement", "message"),
    [(4096, 0, "bucket id 4096"), (-1, 0, "bucket id -1"), (0, 4096, "statement id 4096")],
)
def test_out_of_range_ids_are_refused(bucket: int, statement: int, message: str) -> None:
    with pytest.raises(BucketCodecError, match=message):
        encode_bucket_property(bucket, statement)


def test_non_properties_are_refused() -> None:
    with pytest.raises(BucketCodecError, match="version 2"):
        decode_bucket_property(2 << 29)
    with pytest.raises(BucketCodecError, match="not a BucketCodec property"):
        decode_bucket_property(-1)
    with pytest.raises(BucketCodecError, match="must be an int"):
        encode_bucket_property(True)


def test_vectorised_encoding_matches_scalar() -> None:
    ids = np.array([0, 1, 7, 4095, 12], dtype=np.int64)
    assert encode_bucket_properties(ids, 3).tolist() == [encode_bucket_property(i, 3) for i in ids]
    assert encode_bucket_properties(ids).dtype == np.int32
    with pytest.raises(BucketCodecError, match="bucket id 4096"):
        encode_bucket_properties(np.array([1, 4096]))


def test_record_identifiers_sort_by_write_id_then_bucket_property_then_row_id() -> None:
    b0, b1 = encode_bucket_property(0), encode_bucket_property(1)
    ids = [
        RecordIdentifier(2, b0, 0),
        RecordIdentifier(1, b1, 0),
        RecordIdentifier(1, b0, 5),
        RecordIdentifier(1, b0, 1),
        RecordIdentifier(1, encode_bucket_property(0, 1), 0),
    ]
    assert sorted(ids) == [
        RecordIdentifier(1, b0, 1),
        RecordIdentifier(1, b0, 5),
        RecordIdentifier(1, encode_bucket_property(0, 1), 0),
        RecordIdentifier(1, b1, 0),
        RecordIdentifier(2, b0, 0),
    ]


def test_record_identifier_prints_as_hive_does() -> None:
    rid = RecordIdentifier(1, 536870912, 0)
    assert rid.to_json() == '{"writeid":1,"bucketid":536870912,"rowid":0}'
    assert rid.bucket == BucketProperty(1, 0, 0)
    with pytest.raises(BucketCodecError):
        RecordIdentifier(1, 536870912, "0")  # type: ignore[arg-type]
