"""How a streamed version with a key unique table-wide survives other writers' commits.

Such a version was planned against the table's commit sequence: a key it holds may live in any
partition, and the plan retired it where the Bloom filters of that moment said it might. Any
commit since could have put one of its keys elsewhere, so the catalog refuses the version's
commit unless the check made here, given every file committed or retired since the plan
(`MetaStore.commit(unless_since=...)`, run with the table's row locked), clears them: the
heads of the partitions the commit changes are guarded apart; here the Bloom filters the
other partitions gained since the plan are probed for the version's keys (only those: a few
filters, key-range stats first). A filter added or retired in the version's own partition (a
compaction there) or in a partition the plan did not know conflicts too: the client plans
the version again and retries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from versioned.catalog.records import DataFile, PartitionInfo, SinceCheck
from versioned.keys.bloom import KeyBloomFilter, KeyDigests
from versioned.keys.columns import (
    keyed_partition_columns,
)
from versioned.layouts.version_partition.elsewhere import (
    blooms_by_partition,
    probe_elsewhere,
)
from versioned.layouts.version_partition.probe import BLOOM_KIND
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO


@dataclass(frozen=True)
class SincePlan:
    """What a version was planned with: where, against which partitions, with which keys."""

    fileio: FileIO
    table_location: str
    spec: TableSpec
    partition: PartitionInfo
    """The version's own partition."""
    partitions: Mapping[int, PartitionInfo]
    """The table's partitions when the version was planned."""
    keys: pa.Table
    """The version's keys, then each partition value as a string (`part_column`)."""
    digests: KeyDigests
    key_columns: tuple[str, ...]
    load: Callable[[DataFile], KeyBloomFilter]


def since_plan(plan: SincePlan) -> SinceCheck:
    """The check the version's commit hands the catalog (see the module)."""

    def check(changed: Sequence[DataFile]) -> str | None:
        blooms = [f for f in changed if f.kind == BLOOM_KIND]
        own = plan.partition.id
        if any(f.partition_id in (own, None) for f in blooms):
            return f"partition {plan.partition.values} changed its Bloom filters"
        if any(f.partition_id not in plan.partitions for f in blooms):
            return "a partition created since the plan may hold one of its keys"
        new = [f for f in blooms if f.removed_seq is None]
        if not new:
            return None
        found = probe_elsewhere(
            plan.fileio,
            plan.table_location,
            plan.keys,
            plan.digests,
            own_rows={plan.partition.values: np.arange(plan.keys.num_rows)},
            partitions=list(plan.partitions.values()),
            blooms=blooms_by_partition(new),
            key_columns=plan.key_columns,
            keyed_partition_columns=keyed_partition_columns(plan.spec),
            load=plan.load,
        )
        if not found.hits:
            return None
        n = sum(len(rows) for rows in found.hits.values())
        return f"{n} of its keys may have been written in another partition meanwhile"

    return check
