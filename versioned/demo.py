"""`make demo`: the retail scenario of "Making Hive Squawk like a Real Database", end to end.

Regional OLTP databases ship every insert, update and delete of their sales to the lake. The
demo creates ``test.sell`` (partitioned by store_id and create_date) in a fresh local
warehouse, loads an initial batch, applies three change batches (one of them as CSV with a
malformed row), then queries the latest view with SQL, shows the history, reads an earlier
version (time travel) and the net changes between versions.
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from versioned.api.catalog import Catalog, connect
from versioned.cli.render import render_record, render_rows
from versioned.layouts.base import DEAD_LETTER_DIR

if TYPE_CHECKING:
    from versioned.api.table import Table

SELL_COLUMNS = (
    "sell_id BIGINT, acct_id BIGINT, change_ts STRING, create_ts STRING, payment_type_id STRING,"
    " status_id STRING, total_amt DOUBLE, batch INT, op_code STRING, store_id STRING,"
    " create_date STRING"
)
STORES = ["1", "2", "3"]
DATES = ["2024-01-01", "2024-01-02"]


def _sale(rng: random.Random, sell_id: int, batch: int, op: str, ts: str) -> dict[str, Any]:
    return {
        "sell_id": sell_id,
        "acct_id": 1000 + sell_id % 37,
        "change_ts": ts,
        "create_ts": f"{DATES[sell_id % 2]} 09:{sell_id % 60:02d}:00",
        "payment_type_id": rng.choice(["cash", "card", "voucher"]),
        "status_id": rng.choice(["open", "paid", "shipped"]),
        "total_amt": round(rng.uniform(5, 500), 2),
        "batch": batch,
        "op_code": op,
        "store_id": STORES[sell_id % len(STORES)],
        "create_date": DATES[sell_id % 2],
    }


def _title(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 86 - len(text)))


def _show(rows: list[Any]) -> None:
    records = [r.asDict() for r in rows]
    print(render_rows(records, "table", list(records[0]) if records else []))


def run(workdir: Path) -> None:
    """Play the scenario in ``workdir`` (deleted first)."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    rng = random.Random(42)
    cat: Catalog = connect(warehouse=str(workdir / "warehouse"), user="demo")
    print(f"warehouse: {cat.settings.warehouse}\ncatalog:   {cat.settings.catalog_url}")
    sell = _create_sell(cat)
    _apply_batches(sell, rng, workdir)
    _query_latest(cat)
    first = _show_history(sell)
    _travel_in_time(sell, first)
    _show_dead_letters(Path(cat.settings.warehouse) / "test.db/sell" / DEAD_LETTER_DIR)
    print("\nDone. Try: .venv/bin/versioned --warehouse", cat.settings.warehouse, "show test.sell")
    cat.close()


def _create_sell(cat: Catalog) -> Table:
    _title("create table test.sell (partitioned by store_id, create_date)")
    sell = cat.create_table(
        "test.sell",
        columns=SELL_COLUMNS,
        primary_key=["sell_id"],
        partition_by=["store_id", "create_date"],
        op_code_column="op_code",
    )
    print(render_record({k: v for k, v in sell.describe().items() if k != "columns"}, "table"))
    return sell


def _apply(sell: Table, label: str, changes: Any, **kw: Any) -> None:
    _title(label)
    started = time.monotonic()
    result = sell.upsert(changes, progress=lambda m: print(f"  .. {m}"), **kw)
    print(render_record(result.to_dict(), "table"))
    print(f"  ({time.monotonic() - started:.1f}s)")


def _apply_batches(sell: Table, rng: random.Random, workdir: Path) -> None:
    """The four change batches: an initial load, changes, a CSV file with bad rows, edge cases."""
    initial = [_sale(rng, i, 1, "I", "2024-01-02 10:00:00") for i in range(1, 31)]
    _apply(sell, "batch 1: initial load of 30 sales", pa.Table.from_pylist(initial))

    batch2 = [_sale(rng, i, 2, "U", "2024-01-02 11:00:00") for i in (1, 2, 3, 4, 5)]
    batch2 += [_sale(rng, i, 2, "I", "2024-01-02 11:00:00") for i in (31, 32, 33)]
    batch2 += [{**_sale(rng, i, 2, "D", "2024-01-02 11:00:00")} for i in (6, 7)]
    _apply(sell, "batch 2: 5 updates, 3 inserts, 2 deletes", pa.Table.from_pylist(batch2))

    csv = _write_batch3_csv(rng, workdir / "batch3.csv")
    _apply(sell, "batch 3 (CSV file): update, insert, delete and two malformed rows", str(csv))

    batch4 = [_sale(rng, 6, 4, "I", "2024-01-02 13:00:00")]  # a deleted sale comes back
    batch4 += [_sale(rng, 2, 4, "U", "2024-01-02 13:00:00"), _sale(rng, 2, 4, "D", "t")]
    batch4 += [_sale(rng, 999, 4, "D", "2024-01-02 13:00:00")]  # unknown key: a no-op
    _apply(
        sell,
        "batch 4: re-insert a deleted sale; update+delete of one key; unknown delete",
        pa.Table.from_pylist(batch4),
    )


def _write_batch3_csv(rng: random.Random, csv: Path) -> Path:
    rows3 = [_sale(rng, 1, 3, "U", "2024-01-02 12:00:00"), _sale(rng, 40, 3, "I", "x")]
    rows3.append(_sale(rng, 8, 3, "D", "2024-01-02 12:00:00"))
    header = list(rows3[0])
    lines = [",".join(header)] + [",".join(str(r[c]) for c in header) for r in rows3]
    lines.append("not-a-number,1,2024,,cash,open,12.5,3,U,1,2024-01-01")  # dead letter
    lines.append("41,1,2024,,cash,open,7.0,3,X,1,2024-01-01")  # unknown op code
    csv.write_text("\n".join(lines) + "\n")
    return csv


def _query_latest(cat: Catalog) -> None:
    _title("SQL over the latest view: sales per store")
    query = (
        "SELECT store_id, COUNT(*) AS sales, ROUND(SUM(total_amt), 2) AS revenue "
        "FROM test.sell GROUP BY store_id ORDER BY store_id"
    )
    print(query)
    _show(cat.sql(query).collect())

    _title("SQL: sales 1-8, latest state (2, 7 and 8 deleted; 6 re-inserted)")
    _show(
        cat.sql(
            "SELECT sell_id, batch, status_id, total_amt, store_id FROM test.sell "
            "WHERE sell_id <= 8 ORDER BY sell_id"
        ).collect()
    )


def _show_history(sell: Table) -> int:
    """Print the table's history; return its first version."""
    _title("history")
    history = sell.history()
    print(
        render_rows(
            [
                {
                    "version": c.version,
                    "operation": c.operation,
                    **{k: c.metrics.get(k) for k in ("inserted", "updated", "deleted", "rejected")},
                }
                for c in history
            ],
            "table",
        )
    )
    return history[0].version


def _travel_in_time(sell: Table, first: int) -> None:
    _title(f"time travel: sales 1-8 as of version {first}")
    _show(
        sell.read(as_of=first)
        .where("sell_id <= 8")
        .orderBy("sell_id")
        .select("sell_id", "batch", "status_id", "total_amt")
        .collect()
    )

    _title(f"net changes since version {first}")
    _show(
        sell.changes(since=first)
        .select("_change", "sell_id", "batch", "store_id")
        .orderBy("sell_id")
        .collect()
    )


def _show_dead_letters(folder: Path) -> None:
    dead = sorted(folder.rglob("*.json"))
    _title("dead letters (kept with their reason)")
    for path in dead:
        print(path.read_text().strip())


def main() -> None:
    """Entry point of ``python -m versioned.demo``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="demo-output", help="where to put the warehouse")
    args = parser.parse_args()
    run(Path(args.workdir).resolve())


if __name__ == "__main__":
    main()
