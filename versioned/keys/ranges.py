"""Which keys of a batch may lie within a file's or version's key range (its stats)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class KeyRangeTester:
    """Per key: whether it lies within a file's or version's ``min_key``/``max_key`` stats.

    Numbers and strings are compared per key; other key types (and values the stats cannot
    bound: nulls, NaN) are never pruned, as `stats.may_contain_range` does for a batch.
    """

    def __init__(self, column: pa.ChunkedArray) -> None:
        kind = column.type
        self._numbers: np.ndarray | None = None
        self._strings: pa.ChunkedArray | None = None
        self._unbounded = np.zeros(len(column), dtype=bool)
        if pa.types.is_integer(kind) or pa.types.is_floating(kind):
            values = np.asarray(column.to_numpy(), dtype=np.float64)
            self._unbounded = np.isnan(values)
            self._numbers = values
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            self._strings = column
            self._unbounded = np.asarray(
                pc.is_null(column).to_numpy(zero_copy_only=False), dtype=bool
            )

    def within(self, stats: Mapping[str, Any]) -> np.ndarray:
        """Per key: false only when it certainly lies outside ``stats``' key range."""
        n = len(self._unbounded)
        if stats.get("keys") == 0:
            return np.zeros(n, dtype=bool)
        low, high = stats.get("min_key"), stats.get("max_key")
        inside = np.ones(n, dtype=bool)
        if self._numbers is not None:
            if isinstance(low, int | float) and not isinstance(low, bool):
                inside &= self._numbers >= float(low)
            if isinstance(high, int | float) and not isinstance(high, bool):
                inside &= self._numbers <= float(high)
        elif self._strings is not None:
            for bound, compare in ((low, pc.greater_equal), (high, pc.less_equal)):
                if isinstance(bound, str):
                    result = pc.fill_null(compare(self._strings, bound), True)
                    inside &= np.asarray(result.to_numpy(zero_copy_only=False), dtype=bool)
        return inside | self._unbounded
