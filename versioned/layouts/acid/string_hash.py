"""Hive's bucket hashes of UTF-8 strings, vectorised over an Arrow array's buffers.

The strings are grouped by byte length; each group becomes an ``(n, length)`` byte matrix
gathered straight from the Arrow data buffer, hashed column by column with numpy. The Python
loop runs over distinct lengths (and over the 4-byte blocks of one length), never over rows.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from versioned.layouts.acid import murmur3


def _offsets_and_data(array: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    binary = array.cast(pa.large_binary())
    buffers = binary.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[
        binary.offset : binary.offset + len(binary) + 1
    ]
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)
        if buffers[2] is not None
        else np.zeros(0, dtype=np.uint8)
    )
    return offsets, data


def string_hashes(array: pa.Array, *, murmur: bool, seed_one: bool) -> npt.NDArray[np.uint32]:
    """The field hash of every string of ``array`` (NULLs get an arbitrary value).

    Args:
        array: A string or binary array; the hash covers each value's bytes.
        murmur: Version 2 (Murmur3 of the bytes) when true; otherwise version 1
            (``r = 31 * r + signed byte``).
        seed_one: Version 1 only: start ``r`` at 1 (Hadoop ``Text.hashCode``, used for
            varchar and char) instead of 0 (string).
    """
    offsets, data = _offsets_and_data(array)
    lengths = np.diff(offsets)
    out = np.zeros(len(array), dtype=np.uint32)
    for length in np.unique(lengths).tolist():
        rows = np.nonzero(lengths == length)[0]
        if length == 0:
            matrix = np.zeros((len(rows), 0), dtype=np.uint8)
        else:
            matrix = data[offsets[rows][:, None] + np.arange(length, dtype=np.int64)]
        if murmur:
            out[rows] = murmur3.v_hash_bytes_matrix(matrix)
        else:
            out[rows] = _java_byte_fold(matrix, seed_one)
    return out


def _java_byte_fold(matrix: npt.NDArray[np.uint8], seed_one: bool) -> npt.NDArray[np.uint32]:
    """``r = 31 * r + (signed byte)`` over each row, modulo 2**32, from 0 or 1."""
    n, length = matrix.shape
    # 31**(length-1-i) mod 2**32 weights the i-th byte; the seed is weighted by 31**length.
    powers = np.array([pow(31, k, 1 << 32) for k in range(length + 1)], dtype=np.uint32)
    weights = powers[:length][::-1]
    signed = murmur3.v_signed_byte(matrix)
    total = (signed * weights).sum(axis=1, dtype=np.uint32) if length else np.zeros(n, np.uint32)
    if seed_one:
        total = total + powers[length]
    return total.astype(np.uint32)
