"""Layout 2, Hive ACID: the on-storage format (names, bucket hash, ROW__IDs, ORC files).

Its format here in plain Python, pyarrow, numpy and pyorc; its Spark writer, reader and
compactor in `engine/`, its ingest sink, change images and mutation format beside them; the
registry knows it by `layout.LAYOUT`. Facts followed: ``hive-bucketing.md`` and Hive's
``AcidUtils``, ``OrcRecordUpdater``, ``BucketCodec``, ``ValidReaderWriteIdList`` and
``OrcAcidUtils``.
"""

from __future__ import annotations

from versioned.layouts.acid.acid_metadata import AcidStats, format_key_index, parse_key_index
from versioned.layouts.acid.acid_state import AcidState, acid_state
from versioned.layouts.acid.bucket_codec import (
    MAX_BUCKET_ID,
    MAX_STATEMENT_ID,
    BucketProperty,
    RecordIdentifier,
    decode_bucket_property,
    encode_bucket_properties,
    encode_bucket_property,
)
from versioned.layouts.acid.bucket_hash import (
    BucketingVersion,
    bucket_hashes,
    bucket_ids,
    bucket_number,
    column_hashes,
    hash_kind,
    hive_hash,
)
from versioned.layouts.acid.directories import (
    ACID_VERSION_CONTENT,
    ACID_VERSION_MARKER,
    AcidDir,
    BaseDir,
    BucketFile,
    DeltaDir,
    is_hidden,
    parse_bucket_file,
    parse_directory,
    parse_side_file,
    side_file_name,
    sort_deltas,
)
from versioned.layouts.acid.errors import (
    AcidFileError,
    AcidNameError,
    BucketCodecError,
    FlushLengthError,
    NotEnoughHistoryError,
    UnsupportedBucketTypeError,
    WriteIdListError,
)
from versioned.layouts.acid.flush_length import (
    FlushLengthFile,
    encode_flush_lengths,
    last_flush_length,
    logical_length,
    parse_flush_lengths,
    side_file_path,
)
from versioned.layouts.acid.orc_files import (
    AcidBucketFile,
    AcidBucketWriter,
    AcidFileSummary,
    open_bucket_writer,
    read_bucket,
    read_bucket_file,
)
from versioned.layouts.acid.orc_schema import (
    DELETE,
    INSERT,
    UPDATE,
    acid_arrow_schema,
    acid_orc_schema,
    orc_type,
    row_arrow_type,
)
from versioned.layouts.acid.paths import (
    acid_dir_path,
    bucket_file_path,
    marker_path,
    partition_dir,
    read_acid_version,
    side_file_rel,
    write_acid_version_marker,
)
from versioned.layouts.acid.write_ids import (
    CompactorWriteIdList,
    RangeResponse,
    ValidWriteIdList,
)

__all__ = [
    "ACID_VERSION_CONTENT",
    "ACID_VERSION_MARKER",
    "DELETE",
    "INSERT",
    "MAX_BUCKET_ID",
    "MAX_STATEMENT_ID",
    "UPDATE",
    "AcidBucketFile",
    "AcidBucketWriter",
    "AcidDir",
    "AcidFileError",
    "AcidFileSummary",
    "AcidNameError",
    "AcidState",
    "AcidStats",
    "BaseDir",
    "BucketCodecError",
    "BucketFile",
    "BucketProperty",
    "BucketingVersion",
    "CompactorWriteIdList",
    "DeltaDir",
    "FlushLengthError",
    "FlushLengthFile",
    "NotEnoughHistoryError",
    "RangeResponse",
    "RecordIdentifier",
    "UnsupportedBucketTypeError",
    "ValidWriteIdList",
    "WriteIdListError",
    "acid_arrow_schema",
    "acid_dir_path",
    "acid_orc_schema",
    "acid_state",
    "bucket_file_path",
    "bucket_hashes",
    "bucket_ids",
    "bucket_number",
    "column_hashes",
    "decode_bucket_property",
    "encode_bucket_properties",
    "encode_bucket_property",
    "encode_flush_lengths",
    "format_key_index",
    "hash_kind",
    "hive_hash",
    "is_hidden",
    "last_flush_length",
    "logical_length",
    "marker_path",
    "open_bucket_writer",
    "orc_type",
    "parse_bucket_file",
    "parse_directory",
    "parse_flush_lengths",
    "parse_key_index",
    "parse_side_file",
    "partition_dir",
    "read_acid_version",
    "read_bucket",
    "read_bucket_file",
    "row_arrow_type",
    "side_file_name",
    "side_file_path",
    "side_file_rel",
    "sort_deltas",
    "write_acid_version_marker",
]
