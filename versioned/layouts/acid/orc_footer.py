"""Adding user metadata to a finished ORC file, for the bucket files Spark's writer makes.

Hive's readers need ``hive.acid.key.index`` (insert files) and ``hive.acid.stats`` (delete
files) in an ACID bucket file's footer; Spark's ORC writer cannot set user metadata (issue 28
item 2). A finished file's tail is ``footer, postscript, one byte: the postscript's length``.
Protobuf messages merge when concatenated (a repeated field's items add up), so the footer
gains metadata items by appending their serialised form to it: as one more chunk of the
footer's compression stream, stored uncompressed (an ORC chunk header's "original" bit, which
every reader honours whatever the file's codec), and the postscript is written again with the
footer's new length. Stripes, stripe statistics and the old footer bytes stay as they were.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc

from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.acid_metadata import AcidStats, format_key_index
from versioned.layouts.acid.bucket_codec import RecordIdentifier
from versioned.layouts.acid.errors import AcidFileError

_FOOTER_LENGTH = 1  # PostScript.footerLength
_COMPRESSION = 2  # PostScript.compression (0: NONE)
_BLOCK_SIZE = 3  # PostScript.compressionBlockSize
_USER_METADATA = 5  # Footer.metadata: repeated UserMetadataItem {1: name, 2: value}
_VARINT, _LENGTH_DELIMITED = 0, 2
_DEFAULT_BLOCK = 256 * 1024


def with_acid_metadata(data: bytes) -> bytes:
    """The ACID bucket file ``data`` (written without user metadata) with the ``hive.acid.*``
    metadata Hive's ``OrcRecordUpdater`` writes: each stripe's last ROW__ID, the event counts
    and the ACID version, read from its events one stripe at a time."""
    reader = paorc.ORCFile(pa.BufferReader(data))
    fields = [s.OPERATION, s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID]
    keys: list[RecordIdentifier] = []
    counts = {s.INSERT: 0, s.UPDATE: 0, s.DELETE: 0}
    for i in range(reader.nstripes):
        stripe = reader.read_stripe(i, columns=fields)
        if not stripe.num_rows:
            continue
        last = [stripe.column(f)[stripe.num_rows - 1].as_py() for f in fields[1:]]
        keys.append(RecordIdentifier(*last))
        ops = pc.value_counts(stripe.column(s.OPERATION))
        values, ns = ops.field("values").to_pylist(), ops.field("counts").to_pylist()
        for value, n in zip(values, ns, strict=True):
            counts[value] = counts.get(value, 0) + n
    stats = AcidStats(counts[s.INSERT], counts[s.UPDATE], counts[s.DELETE])
    return with_user_metadata(
        data,
        {
            s.KEY_INDEX_KEY: format_key_index(keys).encode(),
            s.STATS_KEY: stats.to_string().encode(),
            s.VERSION_KEY: s.ACID_VERSION.encode(),
        },
    )


def with_user_metadata(data: bytes, items: Mapping[str, bytes]) -> bytes:
    """The ORC file ``data`` with ``items`` added to its footer's user metadata.

    Raises:
        AcidFileError: ``data`` does not end like an ORC file.
    """
    if not data or not data.startswith(b"ORC"):
        raise AcidFileError("not an ORC file: it does not start with 'ORC'")
    ps_length = data[-1]
    postscript = data[-1 - ps_length : -1]
    fields = _fields(postscript)
    footer_length = _int(fields, _FOOTER_LENGTH)
    compressed = _int(fields, _COMPRESSION, 0) != 0
    block = _int(fields, _BLOCK_SIZE, _DEFAULT_BLOCK)
    footer_end = len(data) - 1 - ps_length
    if footer_length > footer_end:
        raise AcidFileError("not an ORC file: its footer length exceeds the file")
    added = b"".join(
        _field(_USER_METADATA, _field(1, name.encode()) + _field(2, value))
        for name, value in items.items()
    )
    if compressed:
        added = _original_chunks(added, block)
    new_fields = [
        (n, w, _varint(footer_length + len(added)) if n == _FOOTER_LENGTH else v)
        for n, w, v in fields
    ]
    new_postscript = b"".join(_key(n, w) + _encoded(w, v) for n, w, v in new_fields)
    if len(new_postscript) > 255:
        raise AcidFileError("the ORC postscript would exceed 255 bytes")
    return data[:footer_end] + added + new_postscript + bytes([len(new_postscript)])


def _original_chunks(raw: bytes, block: int) -> bytes:
    """``raw`` as chunks of a compression stream flagged uncompressed, each at most one
    compression block (readers size their buffers by it)."""
    out = bytearray()
    for start in range(0, len(raw), block):
        piece = raw[start : start + block]
        header = (len(piece) << 1) | 1
        out += bytes([header & 0xFF, (header >> 8) & 0xFF, (header >> 16) & 0xFF]) + piece
    return bytes(out)


def _fields(message: bytes) -> list[tuple[int, int, bytes]]:
    """``(field number, wire type, raw value)`` of each field of a protobuf message (varints
    as their encoded bytes, length-delimited values without their length)."""
    out = []
    pos = 0
    while pos < len(message):
        key, pos = _read_varint(message, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            start = pos
            _, pos = _read_varint(message, pos)
            out.append((number, wire, message[start:pos]))
        elif wire == _LENGTH_DELIMITED:
            length, pos = _read_varint(message, pos)
            out.append((number, wire, message[pos : pos + length]))
            pos += length
        else:
            raise AcidFileError(f"unexpected protobuf wire type {wire} in an ORC postscript")
    return out


def _int(fields: list[tuple[int, int, bytes]], number: int, default: int | None = None) -> int:
    for n, w, v in fields:
        if n == number and w == _VARINT:
            return _read_varint(v, 0)[0]
    if default is None:
        raise AcidFileError(f"the ORC postscript lacks field {number}")
    return default


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise AcidFileError("truncated protobuf varint in an ORC file's tail")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint((number << 3) | wire)


def _encoded(wire: int, value: bytes) -> bytes:
    return value if wire == _VARINT else _varint(len(value)) + value


def _field(number: int, value: bytes) -> bytes:
    return _key(number, _LENGTH_DELIMITED) + _varint(len(value)) + value
