"""Hive's BucketCodec and RecordIdentifier (ROW__ID), as the acid layout writes them.

The scalar codec and `RecordIdentifier` are defined below the layers, in
`versioned.record_ids` (the mutation API takes ROW__IDs without importing a layout); this
module adds the vectorised encoding the acid writers use.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from versioned.record_ids import (
    MAX_BUCKET_ID,
    MAX_STATEMENT_ID,
    BucketCodecError,
    BucketProperty,
    RecordIdentifier,
    decode_bucket_property,
    encode_bucket_property,
)

__all__ = [
    "MAX_BUCKET_ID",
    "MAX_STATEMENT_ID",
    "BucketCodecError",
    "BucketProperty",
    "RecordIdentifier",
    "decode_bucket_property",
    "encode_bucket_properties",
    "encode_bucket_property",
]


def encode_bucket_properties(
    bucket_ids: npt.NDArray[np.integer], statement_id: int | None = None
) -> npt.NDArray[np.int32]:
    """`encode_bucket_property` of every bucket id of an array (one statement id for all)."""
    ids = np.asarray(bucket_ids)
    if ids.size and (ids.min() < 0 or ids.max() > MAX_BUCKET_ID):
        bad = int(ids.min()) if ids.min() < 0 else int(ids.max())
        encode_bucket_property(bad, statement_id)  # raises with the message
    base = encode_bucket_property(0, statement_id)
    return (np.int32(base) | (ids.astype(np.int32) << np.int32(16))).astype(np.int32)
