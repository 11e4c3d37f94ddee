"""The mixed-load history check (`tests.faults.history`) with the warehouse on S3, behind a
proxy that injects an object store's faults (`tests.support.s3_fault_proxy`) between every
S3 client and the server: the driver's pyarrow, Spark's S3A and the Python workers' pyarrow
(issue 46). The faults take turns with the catalog's connection kills: a burst of 503
SlowDown answers, a part of a multipart upload cut halfway, a lost reply to a stored write,
slow GETs.

Besides the history's replay on the model: every error a client was told is one line; every
file a commit lists is whole on the server (its size is the catalog's); vacuum then leaves
nothing the catalog does not list (the orphans of failed writes go). Runs in the S3 tier,
whose session has S3A: ``make faults-s3``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults.conftest import FaultyCatalog
from tests.faults.history import check, run, summary
from tests.support.layout_profiles import LAYOUTS
from tests.support.s3_fault_proxy import FAULTS, S3FaultProxy
from tests.support.test_warehouse import S3_TIER, files_under, tier_server
from versioned.api.catalog import Catalog, connect

pytestmark = [
    pytest.mark.faults,
    pytest.mark.skipif(
        not S3_TIER, reason="needs the S3 tier's session, which has S3A (make faults-s3)"
    ),
]

BUCKET = "faulty"
"""The proxied bucket: S3A takes its endpoint per bucket, so the tier's own bucket keeps
going to the server directly."""


@pytest.fixture(scope="module")
def proxy(spark: Any) -> Iterator[S3FaultProxy]:
    server = tier_server()
    server.create_bucket(BUCKET)
    proxy = S3FaultProxy(server.endpoint)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_mixed_load_under_object_store_faults_replays_on_the_model(
    spark: Any,
    faulty: FaultyCatalog,
    proxy: S3FaultProxy,
    seed: int,
    layout: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    warehouse = f"s3://{BUCKET}/{layout}-{tmp_path.name}"
    opened: list[Catalog] = []

    def open_catalog() -> Catalog:
        cat = connect(catalog=faulty.url, warehouse=warehouse, spark=spark, user="alice")
        opened.append(cat)
        return cat

    rng = random.Random(seed)
    turns = itertools.cycle(["catalog", *FAULTS])
    before = dict(proxy.served)

    def strike() -> None:
        turn = next(turns)
        if turn == "catalog":
            faulty.terminate_backends()
        elif turn == "SlowDown":
            proxy.slow_down(rng.randint(1, 3))
        elif turn == "cut upload":
            proxy.cut_upload()
        elif turn == "lost reply":
            proxy.lose_write_reply()
        else:
            proxy.slow_gets(rng.randint(1, 3), delay_s=rng.uniform(0.2, 1.0))

    proxy.disarm()
    try:
        history = run(open_catalog, strike, layout=layout, seed=seed)
        proxy.disarm()
        print(summary(history), {k: proxy.served[k] - before.get(k, 0) for k in FAULTS})
        for op in history.ops:
            if op.error:
                print(op.id, op.kind, op.error[:300])
        assert check(history) == []
        told = [o.error for o in history.ops if o.error is not None]
        assert [e for e in told if "\n" in e or "Traceback" in e] == []
        assert all(proxy.served[k] > before.get(k, 0) for k in FAULTS), proxy.served

        cat = open_catalog()
        t = cat.table("t.sales", need="write")
        fileio = cat.engine_context.fileio
        for f in cat.engine_context.store.all_files(t.name):
            size = fileio.size(f"{t.info.location}/{f.path}")
            assert size == f.size_bytes, f"{f.path}: {size} bytes, the catalog says {f.size_bytes}"
        t.vacuum(retain_hours=24.0, grace_hours=0.0)
        listed = {f.path for f in cat.engine_context.store.all_files(t.name)}
        left = {
            p
            for p in files_under(cat, t.info.location) - listed
            if not p.startswith("_dead_letter/")
        }
        assert left == set(), "files no commit lists outlived vacuum"
    finally:
        proxy.disarm()
        for cat in opened:
            cat.close()
