"""Hive's Murmur3 x86 32-bit hash (``org.apache.hive.common.util.Murmur3.hash32``).

Standard Murmur3 x86_32 with Hive's seed 104729 and one quirk that must be reproduced: the
1-3 tail bytes are Java ``byte`` values, sign-extended to ``int`` before they are mixed, so a
tail byte >= 0x80 gives a different hash from the reference algorithm.

Two forms: `hash32` for one byte string (the scalar reference), and vectorised helpers over
numpy ``uint32`` arrays that hash many equally long inputs at once (all arithmetic wraps
modulo 2**32, as Java's ``int`` does).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

SEED = 104729
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_N = 0xE6546B64
_MASK = 0xFFFFFFFF

U32 = npt.NDArray[np.uint32]


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k(k: int) -> int:
    k = (k * _C1) & _MASK
    k = _rotl(k, 15)
    return (k * _C2) & _MASK


def _fmix(h: int, length: int) -> int:
    h ^= length & _MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def to_int32(value: int) -> int:
    """``value`` wrapped to a signed 32-bit int, as a Java ``(int)`` cast does."""
    value &= _MASK
    return value - (1 << 32) if value & 0x80000000 else value


def hash32(data: bytes, seed: int = SEED) -> int:
    """Hive's ``Murmur3.hash32(data)``: a signed 32-bit int.

    Args:
        data: The bytes to hash.
        seed: Hive always uses 104729.
    """
    h = seed & _MASK
    nblocks = len(data) // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        h ^= _mix_k(k)
        h = (_rotl(h, 13) * 5 + _N) & _MASK
    tail = data[4 * nblocks :]
    if tail:
        # Java bytes are signed: each tail byte is sign-extended before the shift and xor.
        k1 = 0
        for i in reversed(range(len(tail))):
            signed = tail[i] - 256 if tail[i] >= 0x80 else tail[i]
            k1 ^= (signed << (8 * i)) & _MASK
        h ^= _mix_k(k1)
    return to_int32(_fmix(h, len(data)))


# --- vectorised over numpy uint32 arrays -----------------------------------------------------


def _v_rotl(x: U32, r: int) -> U32:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def v_mix_block(h: U32, k: U32) -> U32:
    """One 4-byte body block (read little-endian into ``k``) mixed into the states ``h``."""
    k = k * np.uint32(_C1)
    k = _v_rotl(k, 15)
    k = k * np.uint32(_C2)
    h = h ^ k
    h = _v_rotl(h, 13)
    return h * np.uint32(5) + np.uint32(_N)


def v_mix_tail(h: U32, k1: U32) -> U32:
    """The tail word ``k1`` (already assembled from sign-extended bytes) mixed into ``h``."""
    k1 = k1 * np.uint32(_C1)
    k1 = _v_rotl(k1, 15)
    k1 = k1 * np.uint32(_C2)
    return h ^ k1


def v_finalise(h: U32, length: int) -> U32:
    """Murmur3's finalisation of the states ``h`` of inputs ``length`` bytes long."""
    h = h ^ np.uint32(length & _MASK)
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def v_seed(n: int) -> U32:
    """``n`` fresh hash states."""
    return np.full(n, SEED, dtype=np.uint32)


def v_signed_byte(byte_values: npt.NDArray[np.uint8]) -> U32:
    """Bytes as Java sign-extends them to ``int`` (0x80 -> 0xFFFFFF80), as uint32."""
    return byte_values.view(np.int8).astype(np.int32).view(np.uint32)


def v_hash_bytes_matrix(matrix: npt.NDArray[np.uint8]) -> U32:
    """`hash32` of every row of an ``(n, length)`` byte matrix (rows of equal length)."""
    n, length = matrix.shape
    h = v_seed(n)
    nblocks = length // 4
    if nblocks:
        blocks = np.ascontiguousarray(matrix[:, : 4 * nblocks]).view("<u4").astype(np.uint32)
        for j in range(nblocks):
            h = v_mix_block(h, blocks[:, j])
    rest = length - 4 * nblocks
    if rest:
        k1 = np.zeros(n, dtype=np.uint32)
        for i in reversed(range(rest)):
            k1 ^= v_signed_byte(np.ascontiguousarray(matrix[:, 4 * nblocks + i])) << np.uint32(
                8 * i
            )
        h = v_mix_tail(h, k1)
    return v_finalise(h, length)


def v_hash_be_int32(values: U32) -> U32:
    """`hash32` of the 4 big-endian bytes of each 32-bit value."""
    h = v_mix_block(v_seed(len(values)), values.byteswap())
    return v_finalise(h, 4)


def v_hash_be_int64(values: npt.NDArray[np.uint64]) -> U32:
    """`hash32` of the 8 big-endian bytes of each 64-bit value."""
    high = (values >> np.uint64(32)).astype(np.uint32)
    low = (values & np.uint64(_MASK)).astype(np.uint32)
    h = v_mix_block(v_seed(len(values)), high.byteswap())
    h = v_mix_block(h, low.byteswap())
    return v_finalise(h, 8)


def v_hash_be_int16(values: npt.NDArray[np.int16]) -> U32:
    """`hash32` of the 2 big-endian bytes of each 16-bit value (a 2-byte signed tail)."""
    first = (values >> np.int16(8)).astype(np.int8)  # the high byte comes first
    second = values.astype(np.int8)  # the low byte, wrapped to a signed byte
    k1 = (second.astype(np.int32) << np.int32(8)) ^ first.astype(np.int32)
    h = v_mix_tail(v_seed(len(values)), k1.view(np.uint32))
    return v_finalise(h, 2)
