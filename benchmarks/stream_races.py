"""Concurrent streaming writers of one table whose key is unique table-wide (issue 27 item 6).

Each of ``--writers`` processes streams disjoint keys into a partition of its own through
the streaming client (`versioned.streaming`), committing every ``--commit-every`` records, as
four `versioned stream` commands would. Any commit to the table makes every other writer's
prepared version conflict (the table-wide guard); a lost race is retried. Reported per run:
commits, races lost (`lost_races` in each commit's metrics), the slowest commit's race
count, rows read back, and wall time. Spark is never started.

    .venv/bin/python benchmarks/stream_races.py --writers 4 --records 2000 --commit-every 50
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import tempfile
import time
from pathlib import Path
from typing import Any

TABLE = "races.events"


def _writer(warehouse: str, index: int, records: int, commit_every: int) -> None:
    from versioned import connect
    from versioned import streaming as vs

    cat = connect(warehouse=warehouse, user="bench")
    endpoint = vs.EndPoint(cat, TABLE, [f"p{index}"])
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    first = index * 1_000_000
    with endpoint.connect(create_partition=True, agent=f"w{index}") as conn:
        done = 0
        while done < records:
            with conn.fetch_transaction_batch(10, writer) as batch:
                while done < records and batch.remaining_transactions():
                    batch.begin_next_transaction()
                    n = min(commit_every, records - done)
                    batch.write_many([f"{first + done + i},m" for i in range(n)])
                    batch.commit()
                    done += n
    cat.close()


def run(writers: int, records: int, commit_every: int) -> dict[str, Any]:
    from versioned import connect

    with tempfile.TemporaryDirectory() as tmp:
        warehouse = str(Path(tmp) / "wh")
        cat = connect(warehouse=warehouse, user="bench")
        cat.create_table(
            TABLE,
            columns="id BIGINT NOT NULL, msg STRING, part STRING",
            primary_key="id",
            partition_by="part",
        )
        ctx = mp.get_context("spawn")
        procs = [
            ctx.Process(target=_writer, args=(warehouse, i, records, commit_every))
            for i in range(writers)
        ]
        start = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        wall = time.perf_counter() - start
        failed = [p.exitcode for p in procs if p.exitcode != 0]
        history = [c for c in cat.table(TABLE).history() if c.operation == "stream"]
        lost = [int(c.metrics.get("lost_races", 0)) for c in history]
        snapshot = cat.table(TABLE).snapshot()
        rows = sum(f.row_count for f in snapshot.files if f.kind == "data")
        cat.close()
    return {
        "writers": writers,
        "records_each": records,
        "commit_every": commit_every,
        "failed_writers": len(failed),
        "commits": len(history),
        "lost_races": sum(lost),
        "most_races_one_commit": max(lost, default=0),
        "rows": rows,
        "wall_s": round(wall, 1),
    }


def parser() -> argparse.ArgumentParser:
    """The probe's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--commit-every", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    return parser


def main(argv: list[str] | None = None) -> None:
    """Print one JSON line per run."""
    args = parser().parse_args(argv)
    for _ in range(args.runs):
        print(json.dumps(run(args.writers, args.records, args.commit_every)), flush=True)


if __name__ == "__main__":
    main()
