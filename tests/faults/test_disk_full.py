"""The disk fills during a write: an upsert, a compaction, a streaming-ingest commit and an
export fail with one clear `StorageError`, the committed table stays readable and unchanged
(no partial file in any snapshot), and once space is freed, vacuum removes what the failed
write staged and the retry succeeds.

The warehouse (or the export's destination) lives on a small tmpfs the test mounts (root
only); a ballast file leaves it a few kilobytes free before the write that must fail. The
catalog (SQLite) lives elsewhere, on the normal disk.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.layout_profiles import LAYOUTS
from tests.table.sales import apply, batch, latest, make_table, model_rows
from tests.ui.catalogs import DAYS, stream
from tests.ui.catalogs import make_table as make_streamed_table
from versioned.api.catalog import Catalog, connect
from versioned.errors import StorageError

pytestmark = pytest.mark.faults

DISK_MB = 48


class SmallDisk:
    """A tmpfs of `DISK_MB` MiB mounted at ``path``, and a ballast file to fill it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ballast = path / "ballast"

    def fill(self, leave: int = 16 * 1024) -> None:
        """Leave about ``leave`` bytes free."""
        free = _free(self.path)
        with open(self.ballast, "ab") as out:
            out.write(b"\0" * max(0, free - leave))
        assert _free(self.path) <= leave + 8192

    def free(self) -> None:
        """Remove the ballast."""
        self.ballast.unlink(missing_ok=True)


def _free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield SmallDisk(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _catalog(tmp_path: Path, warehouse: Path, spark: Any = None) -> Catalog:
    return connect(
        catalog=f"sqlite:///{tmp_path}/catalog.db", warehouse=str(warehouse), spark=spark
    )


def _table_files(cat: Catalog, t: Any) -> set[str]:
    """Every file under the table's folder, relative to it (dead letters aside)."""
    root = Path(cat.settings.warehouse) / t.info.location
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and not str(p.relative_to(root)).startswith("_dead_letter")
    }


def _listed(t: Any) -> set[str]:
    return {f.path for f in t.snapshot().files}


def _assert_out_of_space(exc: pytest.ExceptionInfo[StorageError]) -> None:
    assert getattr(exc.value, "out_of_space", False), str(exc.value)
    assert "space" in str(exc.value)


WIDE = "x" * 400


def _rows(start: int, n: int, op: str = "I") -> list[Any]:
    return [(i, float(i), op, "ab"[i % 2]) for i in range(start, start + n)]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_upsert_and_a_compaction_out_of_space_change_nothing(
    spark: Any, tmp_path: Path, small_disk: SmallDisk, layout: str
) -> None:
    cat = _catalog(tmp_path, small_disk.path / "wh", spark)
    t = make_table(cat, layout=layout, properties={"auto_compact": "false"})
    model: dict[int, Any] = {}
    first = _rows(0, 200)
    t.upsert(batch(first))
    apply(model, first)
    before, listed = latest(t), _listed(t)

    small_disk.fill()
    big = _rows(1000, 20000)
    with pytest.raises(StorageError) as failed:
        t.upsert(batch(big))
    _assert_out_of_space(failed)
    assert latest(t) == before == model_rows(model)
    assert _listed(t) == listed  # no file of the failed write in the snapshot

    small_disk.free()
    staged = _table_files(cat, t) - _listed(t)
    t.vacuum(retain_hours=0, grace_hours=0)
    assert _table_files(cat, t) & staged == set()  # what the failed write staged is gone
    t.upsert(batch(big))
    apply(model, big)
    assert latest(t) == model_rows(model)

    update = [(i, -1.0, "U", "ab"[i % 2]) for i in range(0, 20000, 7)]
    t.upsert(batch(update))
    apply(model, update)
    before, listed = latest(t), _listed(t)
    small_disk.fill()
    with pytest.raises(StorageError) as failed:
        t.compact()
    _assert_out_of_space(failed)
    assert latest(t) == before and _listed(t) == listed
    small_disk.free()
    t.vacuum(retain_hours=0, grace_hours=0)
    t.compact()
    assert latest(t) == model_rows(model)
    cat.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_streaming_commit_out_of_space_changes_nothing(
    tmp_path: Path, small_disk: SmallDisk, layout: str
) -> None:
    cat = _catalog(tmp_path, small_disk.path / "wh")
    t = make_streamed_table(cat, "d.ev", layout)
    stream(cat, "d.ev", DAYS[0], [["1,a", "2,b"]], agent="pump")
    history, listed = [c.seq for c in t.history()], _listed(t)

    small_disk.fill()
    lines = [f"{i},{WIDE}" for i in range(100, 20100)]
    with pytest.raises(StorageError) as failed:
        stream(cat, "d.ev", DAYS[0], [lines], agent="pump")
    _assert_out_of_space(failed)
    t = cat.table("d.ev")
    assert [c.seq for c in t.history()] == history and _listed(t) == listed
    assert t.metadata("partitions").to_pylist()[0]["live_rows_estimate"] == 2

    small_disk.free()
    t.vacuum(retain_hours=0, grace_hours=0)
    stream(cat, "d.ev", DAYS[0], [lines], agent="pump")
    rows = cat.table("d.ev").metadata("partitions").to_pylist()[0]["live_rows_estimate"]
    assert rows == 2 + len(lines)
    cat.close()


def test_an_export_out_of_space_leaves_no_collection(
    spark: Any, tmp_path: Path, small_disk: SmallDisk
) -> None:
    cat = _catalog(tmp_path, tmp_path / "wh", spark)
    t = make_table(cat, layout="versioned")
    t.upsert(batch(_rows(0, 60000)))
    dest = small_disk.path / "out"

    small_disk.fill()
    with pytest.raises(StorageError) as failed:
        cat.export("t.sales", dest)
    _assert_out_of_space(failed)
    left = [p for p in dest.rglob("*") if p.is_file()] if dest.exists() else []
    assert left == []  # no partial collection: nothing to mistake for one

    small_disk.free()
    done = cat.export("t.sales", dest)
    assert done.rows == 60000
    cat.close()
