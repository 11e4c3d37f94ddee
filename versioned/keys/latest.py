"""The last row of every key in a batch, in input order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from versioned.keys.encoding import encode_key_array

_POSITION = "__position"


def last_per_key(rows: pa.Table, key_columns: Sequence[str]) -> tuple[pa.Table, int]:
    """Keep the last row of every key (input order), as upsert's in-batch dedup does
    without an ordering column; the kept rows stay in input order.

    Returns:
        The kept rows and how many rows were superseded by a later row of their key.
    """
    if rows.num_rows == 0:
        return rows, 0
    keyed = pa.table(
        {"k": encode_key_array(rows, key_columns), _POSITION: np.arange(rows.num_rows)}
    )
    last = keyed.group_by("k", use_threads=False).aggregate([(_POSITION, "max")])
    keep = np.sort(last.column(f"{_POSITION}_max").to_numpy())
    if len(keep) == rows.num_rows:
        return rows, 0
    return rows.take(pa.array(keep)), rows.num_rows - len(keep)
