"""Vacuum's retention is measured on the catalog's clock: a vacuum run by a client whose
clock is days ahead keeps what a snapshot within the retention still reads (no Spark: the
streaming ingest client writes the files, the catalog retires one)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.catalog.test_clock import clock_off_by
from tests.support.layout_profiles import LAYOUTS
from tests.ui.catalogs import DAYS, make_table, stream
from versioned.api.catalog import connect
from versioned.catalog import PartitionCommit


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("skew_days", [2.0, 0.0])
def test_a_client_days_ahead_vacuums_only_what_the_retention_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, skew_days: float
) -> None:
    cat = connect(warehouse=str(tmp_path / "wh"), user="alice")
    t = make_table(cat, "d.ev", layout)
    stream(cat, "d.ev", DAYS[0], [["1,a"], ["2,b"]], agent="pump")
    store, name = cat.engine_context.store, t.name
    data = [f for f in store.snapshot(name).files if f.kind in t.layout.data_kinds]
    first = min(data, key=lambda f: f.added_seq)
    txn = store.begin()
    retire = PartitionCommit(first.partition_id, remove=(first.path,), check_head=False)
    store.commit(txn, name, operation="delete", partitions=[retire])
    on_disk = Path(cat.settings.warehouse) / t.info.location / first.path
    assert on_disk.exists()
    time.sleep(0.05)

    with clock_off_by(monkeypatch, skew_days * 86400):
        result = t.vacuum(retain_hours=1.0, grace_hours=1.0)
    assert first.path not in result.paths
    assert on_disk.exists()  # the snapshot before the delete is an hour from expiring
    # The control: a retention of zero lets it go, whatever the clock.
    assert first.path in t.vacuum(retain_hours=0.0, grace_hours=1.0).paths
    assert not on_disk.exists()
    cat.close()
