"""Every benchmark scenario ``python -m benchmarks`` runs, and what each other module is.

A scenario is a module with ``main(argv)`` and ``parser()`` that measures something and reports
it. Each says what ``--size`` means for it (the command-line arguments it is run with):

* ``smoke``: a few thousand rows, every step once (no warm-up, one repeat): the code runs end
  to end against the same peers, in seconds; the figures mean nothing;
* ``1M`` / ``10M``: a table of that many rows, or, where the work does not grow with a table
  (a 10-row table, a stream of records), the configuration the committed results were made
  with.

`HELPERS` names the modules that are not scenarios (data, engines, reports, plots, the
harness); ``tests/benchmarks`` checks that every module of ``benchmarks/`` is one or the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

SIZES = ("smoke", "1M", "10M")
ONE_M, TEN_M = "1000000", "10000000"


@dataclass(frozen=True)
class Scenario:
    """One benchmark, profile or probe, and its command line at each size."""

    name: str
    summary: str
    smoke: tuple[str, ...]
    sizes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    make: str | None = None
    spark: bool = True
    """Runs in a Spark session (``run all`` shares one)."""
    writes: str = ""
    """What it writes under ``--out`` (nothing: it prints its figures)."""
    work: bool = True
    """Takes ``--work``, its scratch folder."""
    smoke_s: float = 5.0
    """About what its smoke run takes beside CI's other lane (stop 53's log): `halves` splits
    ``run all --half`` by it."""

    @property
    def module(self) -> str:
        return f"benchmarks.{self.name}"

    @property
    def out(self) -> bool:
        """Takes ``--out``, its results folder."""
        return bool(self.writes)

    def has(self, size: str) -> bool:
        """Whether the scenario runs at ``size``."""
        return size == "smoke" or size in self.sizes

    def argv(self, size: str) -> tuple[str, ...]:
        """The scenario's own arguments at ``size`` (KeyError: it has no such size)."""
        return self.smoke if size == "smoke" else self.sizes[size]


def _rows(*extra: str) -> dict[str, tuple[str, ...]]:
    """1M and 10M: tables of that many rows."""
    return {"1M": ("--rows", ONE_M, *extra), "10M": ("--rows", TEN_M, *extra)}


def _as_committed(*argv: str) -> dict[str, tuple[str, ...]]:
    """1M and 10M alike: the work does not grow with a table; the committed configuration."""
    return {"1M": argv, "10M": argv}


SMALL = ("--rows", "2000")
SCENARIOS: tuple[Scenario, ...] = (
    # No Spark: the cheap ones first, so that a broken import fails a run in seconds.
    Scenario(
        "bloom_keys",
        "key encoding and Bloom filters per million keys, next to pybloom-live's loop",
        ("--keys", "2000", "--repeat", "1"),
        {"1M": ("--keys", ONE_M), "10M": ("--keys", TEN_M)},
        spark=False,
        work=False,
        smoke_s=1.3,
    ),
    Scenario(
        "key_scope_probe",
        "the cross-partition Bloom probe of a table-wide key vs a partition-scoped key",
        ("--partitions", "20", "--keys-per-partition", "100", "--batch", "200", "--repeat", "1"),
        {"1M": ("--keys-per-partition", "1000", "--batch", "10000"), "10M": ()},
        spark=False,
        writes="key_scope_probe.{json,md}",
        work=False,
        smoke_s=0.1,
    ),
    Scenario(
        "streaming_encode",
        "records/s of the streaming record writers' encode (records -> typed Arrow rows)",
        ("--records", "2000"),
        _as_committed(),
        spark=False,
        work=False,
        smoke_s=0.2,
    ),
    Scenario(
        "stream_races",
        "concurrent stream writers of one table with a table-wide key: races lost per commit",
        ("--writers", "2", "--records", "100", "--commit-every", "50"),
        _as_committed("--runs", "3"),
        spark=False,
        work=False,
        smoke_s=2.7,
    ),
    Scenario(
        "ui_latency",
        "versioned ui: each page's latency on 100 tables x 1,000 commits (issue 31)",
        (
            *("--tables", "4", "--commits", "30", "--templates", "2"),
            *("--requests", "3", "--cold", "1"),
        ),
        _as_committed(),
        make="bench-ui",
        spark=False,
        writes="ui_latency.{json,md}",
    ),
    # Spark.
    Scenario(
        "upsert",
        "1 % upserts and latest-view reads: versioned vs naive rewrite, delta-rs, pyiceberg",
        (*SMALL, "--batches", "1", "--repeat", "1", "--warm-up-rows", "0"),
        _rows(),
        make="bench",
        writes="upsert.{json,md}, 3 plots",
        smoke_s=19,
    ),
    Scenario(
        "upsert_profile",
        "where versioned's read and load costs go (the profile in upsert_notes.md)",
        (*SMALL, "--batches", "2", "--repeat", "1"),
        _rows(),
        smoke_s=9,
    ),
    Scenario(
        "fixed_cost",
        "a 10-row upsert and a 10-row query per layout, next to plain Spark",
        ("--runs", "1", "--warm-up", "0"),
        _as_committed(),
        writes="fixed_cost.{json,md}",
        work=False,
        smoke_s=8,
    ),
    Scenario(
        "scheduled_job",
        "a new process's 10-row upsert per layout against one that only starts Spark",
        ("--runs", "1", "--layout", "versioned", "--no-archive"),
        _as_committed(),
        make="bench-scheduled-job",
        spark=False,
        writes="scheduled_job.{json,md}",
        work=False,
        smoke_s=40,
    ),
    Scenario(
        "first_load",
        "a first load of 10M narrow / 3M wide rows against a plain partitioned Spark write, "
        "each in a fresh process (issue 45 item 4)",
        ("--rows", "20000", "--shapes", "narrow", "--runs", "1"),
        _as_committed(),
        make="bench-first-load",
        spark=False,
        writes="first_load.{json,md}",
        smoke_s=30,
    ),
    Scenario(
        "s3_requests",
        "the requests to an S3 server (moto's) of each step of a table, beside a plain Spark "
        "table on the same S3A connector (issue 46's request budget)",
        ("--rows", "20000"),
        _as_committed(),
        make="bench-s3",
        spark=False,
        writes="s3_requests.{json,md}",
        work=False,
        smoke_s=30,
    ),
    Scenario(
        "compaction",
        "version-partition compaction vs a plain Spark rewrite of the live rows, then reads",
        (*SMALL, "--batches", "1", "--reads", "1", "--repeat", "1", "--warm-up-rows", "0"),
        _rows(),
        writes="compaction.{json,md,png}",
    ),
    Scenario(
        "read_profile",
        "a narrow read after 10 versions, step by step from a plain scan to the latest view",
        (*SMALL, "--batches", "1", "--repeat", "1"),
        _rows(),
        writes="read_profile.{json,md}",
    ),
    Scenario(
        "caller_session",
        "versioned in the caller's Spark session and its own vs delta-rs MERGE (issue 15)",
        (*SMALL, "--repeat", "1", "--warm-up-rows", "0"),
        _rows(),
        make="bench-caller",
        writes="caller_session.{json,md}",
        smoke_s=26,
    ),
    Scenario(
        "stage_profile",
        "where a first load and a 1 % upsert spend their time, stage by stage, and peak RSS",
        (*SMALL, "--loads", "1", "--batches", "2"),
        _rows(),
        writes="stage_profile.{json,md}",
    ),
    Scenario(
        "scaling",
        "a fixed batch on growing tables, STRING and INT partitions (t(30M) / t(3M))",
        ("--rows", "2000", "--batch-rows", "100", "--batches", "2"),
        {
            "1M": (
                "--rows",
                "300000",
                "--rows",
                ONE_M,
                "--rows",
                "3000000",
                "--batch-rows",
                "10000",
            ),
            "10M": (),  # the committed run: 3M, 10M and 30M rows, batches of 100,000
        },
        make="bench-scaling",
        writes="scaling.{json,md,png}",
        smoke_s=10,
    ),
    Scenario(
        "acid",
        "the acid layout vs versioned, delta-rs MERGE and a naive rewrite; major compaction",
        (
            *(*SMALL, "--batches", "1", "--shared-batches", "1", "--buckets", "2"),
            *("--repeat", "1", "--warm-up-rows", "0"),
        ),
        _rows(),
        make="bench-acid",
        writes="acid.{json,md,png}",
        smoke_s=19,
    ),
    Scenario(
        "acid_read_profile",
        "where a read of an acid table spends its time, after 10 deltas and after compaction",
        (*SMALL, "--batches", "1", "--buckets", "2", "--repeat", "1"),
        _rows(),
        make="bench-acid-profile",
        writes="acid_read_profile.{json,md}",
        smoke_s=11,
    ),
    Scenario(
        "acid_lookup",
        "the cost of finding the stored ROW__IDs of a batch's keys in an acid table",
        (*SMALL, "--deltas", "2", "--repeat", "1"),
        _rows(),
        work=False,
    ),
    Scenario(
        "mutation",
        "the mutation API's vm.apply vs the acid upsert and delta-rs MERGE, 1 % and 10 %",
        (*SMALL, "--buckets", "2", "--repeat", "1", "--warm-up-rows", "0"),
        _rows(),
        make="bench-mutation",
        writes="mutation.{json,md}",
        smoke_s=10,
    ),
    Scenario(
        "continuous",
        "30 change batches in a row: reads vs plain scans and upserts vs MERGE (issue 30)",
        (
            *(*SMALL, "--batches", "3", "--partitions", "4", "--buckets", "2"),
            *("--repeat", "1", "--warm-up-rows", "0", "--no-maintenance-reference"),
            *("--tpch", "--tpch-scale", "0.001"),
        ),
        _rows(),
        make="bench-continuous",
        writes="continuous.{json,md,png}",
        smoke_s=56,
    ),
    Scenario(
        "peers",
        "Delta and Iceberg MERGE on their Spark lines, delta-rs and a plain write vs versioned",
        (
            *("--rows", "2000", "--partitions", "4", "--upsert-batches", "2", "--batches", "1"),
            *("--tpch-scale", "0.001", "--tpch-batches", "1", "--repeat", "1", "--every", "1"),
            *("--driver-memory", "1g", "--one-process-per-group", "--smoke-jvm"),
            # TPC-H's batches go through the continuous phase's code (and `continuous` smokes
            # its TPC-H data): a third phase in each group's process cost CI a minute
            *("--phases", "upsert", "continuous"),
        ),
        {"10M": ()},  # the committed run: 10M rows, 30 batches, TPC-H SF 1 (issue 45)
        make="bench-peers",
        spark=False,
        writes="peers.{json,md,png}",
        smoke_s=150,
    ),
    Scenario(
        "streaming",
        "streaming ingest: records/s and commit latency per catalog and layout, vs delta-rs",
        (
            *("--records", "2000", "--txn-records", "200", "--parallel", "1"),
            *("--sqlite-only", "--check", "--start-delay", "0"),
        ),
        _as_committed("--check"),
        make="bench-streaming",
        writes="streaming.{json,md}",
    ),
)

HELPERS: dict[str, str] = {
    "harness": "the shared harness: Spark session, timing, medians, stamps, tables, runner",
    "internals": "the one module that imports versioned's internals (profiles and probes)",
    "scenarios": "this registry",
    "upsert_data": "data of upsert, acid, mutation, caller_session, scaling and the profiles",
    "upsert_engines": "versioned, naive rewrite, delta-rs and pyiceberg behind one interface",
    "upsert_report": "upsert.md (tables, targets) from upsert.json",
    "upsert_plots": "upsert's three plots",
    "acid_engines": "the acid table behind upsert_engines' interface; save/restore, compaction",
    "acid_reads": "acid's read checkpoints: a table's latest view vs plain ORC/Parquet copies",
    "acid_footer": "acid's probe of the hive.acid.* footer step (wraps the engine's calls)",
    "acid_report": "acid.md from acid.json",
    "acid_plots": "acid's read-ratio plot",
    "continuous_data": "continuous's 6-column table and change batches (numpy, pyarrow)",
    "continuous_tpch": "continuous's TPC-H variant: lineitem, RF1/RF2-like batches, Q1, Q6",
    "continuous_engines": "continuous's writers: versioned tables of each layout, delta-rs MERGE",
    "continuous_reads": "continuous's reads: a table's queries vs a plain copy of its live rows",
    "continuous_report": "continuous.md (summary against the targets, batch tables)",
    "continuous_plots": "continuous's plot: read ratios and cumulative cost over the batches",
    "peer_engines": "peers' Delta and Iceberg tables fed by MERGE INTO, with their upkeep",
    "peer_child": "peers' child process: one phase on one Spark line, its record as JSON",
    "peers_report": "peers.md (the side-by-side table, each phase) from peers.json",
    "peers_plots": "peers' plot: upsert ratios, cumulative cost and read ratios per batch",
    "scheduled_job_probe": "scheduled_job's child: one command in a new process, timed by phase",
    "ui_catalog": "ui_latency's catalog: tables streamed for real, copied in the catalog database",
}


def by_name() -> dict[str, Scenario]:
    """The scenarios by name, in run order."""
    return {s.name: s for s in SCENARIOS}


def halves(scenarios: Sequence[Scenario]) -> tuple[list[Scenario], list[Scenario]]:
    """``scenarios`` in two halves of about equal smoke time (`Scenario.smoke_s`; largest
    first, each to the lighter half), each in the order given: CI's bench-smoke runs one
    half a commit (``run all --half seed``), so consecutive commits run them all."""
    loads = [0.0, 0.0]
    half_of: dict[str, int] = {}
    for scenario in sorted(scenarios, key=lambda s: -s.smoke_s):
        lighter = 0 if loads[0] <= loads[1] else 1
        half_of[scenario.name] = lighter
        loads[lighter] += scenario.smoke_s
    first = [s for s in scenarios if half_of[s.name] == 0]
    second = [s for s in scenarios if half_of[s.name] == 1]
    return first, second
