"""Maintenance commands: compact (on demand or scheduled) and vacuum."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import click

from versioned.api.catalog import layouts
from versioned.cli.context import CliContext, output_option, pass_cli, progress_printer
from versioned.cli.render import echo, render_record, render_rows
from versioned.errors import CommitConflictError, PermissionDeniedError

if TYPE_CHECKING:
    from versioned.options import CompactionOptions, CompactionThresholds

PLAN_COLUMNS = [
    "table",
    "partition",
    "high_water_mark",
    "versions",
    "files",
    "rows_estimate",
    "files_to_write",
    "why",
]
RESULT_COLUMNS = [
    "table",
    "partition",
    "status",
    "version",
    "high_water_mark",
    "versions",
    "rows",
    "tombstones",
    "files_removed",
    "files_added",
    "seconds",
]


@click.command("compact")
@click.argument("name", metavar="DB.TABLE", required=False)
@click.option(
    "--all",
    "all_tables",
    is_flag=True,
    help="Every table you may write; only partitions past the thresholds (for cron/Airflow).",
)
@click.option(
    "--partition",
    "partitions",
    multiple=True,
    metavar="K=V,...",
    help="Only this partition, e.g. store_id=7,create_date=2024-01-01 (repeatable; values "
    "escaped as in directory names, %2C for a comma).",
)
@click.option(
    "--min-versions",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Pick partitions with at least N versions [--all default: 10].",
)
@click.option(
    "--max-index-entries",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help="Pick partitions with at least K index entries [--all default: 100000].",
)
@click.option(
    "--min-small-files",
    type=click.IntRange(min=1),
    default=None,
    metavar="F",
    help="Pick partitions with at least F small data files [--all default: 10].",
)
@click.option(
    "--rows-per-file",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Target rows per data file [default: 1000000].",
)
@click.option(
    "--kind",
    type=click.Choice(("minor", "major")),
    default=None,
    help="Acid tables only. minor: a partition's deltas -> one delta_MIN_MAX and "
    "delete_delta_MIN_MAX (events unchanged); major: base + deltas -> one base_W with "
    "the deletes applied. [default: major for DB.TABLE; with --all, Hive's initiator rules "
    "decide per partition (table properties compactor.delta.pct.threshold, "
    "compactor.delta.num.threshold, compactor.abortedtxn.threshold)]",
)
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No plan or progress messages on stderr.")
@output_option
@pass_cli
def compact(
    state: CliContext,
    name: str | None,
    all_tables: bool,
    partitions: tuple[str, ...],
    min_versions: int | None,
    max_index_entries: int | None,
    min_small_files: int | None,
    rows_per_file: int | None,
    kind: Literal["minor", "major"] | None,
    dry_run: bool,
    quiet: bool,
) -> None:
    """Rewrite partitions of DB.TABLE into one version holding only their latest rows.

    Each partition commits on its own; readers keep their snapshots and writes that commit
    meanwhile are not lost. The plan's rows_estimate is the rows in the partition's files
    minus its version-index entries, known without reading data: a lower bound of the live
    rows (each entry retires at most one older row), so it can be 0 for a partition with
    live rows; the result of a real compaction shows the rows written. Exits 0 when
    everything chosen was compacted or there was nothing to do, 75 when writers kept
    committing to a partition first (run it again).

    Acid tables are compacted as Hive's compactor does: a named table gets a major
    compaction (--kind minor merges only the deltas); with --all, Hive's initiator rules
    choose minor, major or nothing per partition (--kind forces one). --min-versions,
    --max-index-entries and --min-small-files do not apply to them.

    \b
    Examples:
      versioned compact test.sell
      versioned compact test.sell --partition store_id=7,create_date=2024-01-01 --dry-run
      versioned compact --all --min-versions 20        # scheduled: past the thresholds
      versioned compact test.acid_sell --kind minor    # acid: merge the deltas only
    """
    if bool(name) == all_tables:
        raise click.UsageError("give DB.TABLE or --all (not both)")
    if all_tables and partitions:
        raise click.UsageError("--partition needs DB.TABLE, not --all")
    thresholds = _thresholds(all_tables, min_versions, max_index_entries, min_small_files)
    say = progress_printer(quiet)
    tables = [state.table(name, "write")] if name else _writable_tables(state, say)
    if partitions:
        _warn_old_partition_syntax(partitions, tables[0].info.spec.partition_by)
    kinds = tables[0].layout.compaction_kinds if name else ()
    if name and kind and kind not in kinds:
        with_kinds = " or ".join(each.name for each in layouts() if each.compaction_kinds)
        raise click.UsageError(
            f"--kind applies to {with_kinds} tables; {name} uses the "
            f"{tables[0].info.spec.layout} layout"
        )
    options = {t.name: _options(t, rows_per_file, kind, all_tables) for t in tables}
    plans = [
        (table, p)
        for table in tables
        for p in table.compact(
            list(partitions) or None,
            thresholds=thresholds,
            options=options[table.name],
            dry_run=True,
        ).partitions
    ]
    plan_rows = [_plan_row(table, p) for table, p in plans]
    if dry_run or not plans:
        if not plans:
            say("nothing to compact")
        echo(render_rows(plan_rows, state.output, PLAN_COLUMNS))
        return
    if not quiet and state.output == "table":
        click.echo(render_rows(plan_rows, "table", PLAN_COLUMNS), err=True)
    results = []
    for table in dict.fromkeys(t for t, _ in plans):
        done = table.compact(
            list(partitions) or None,
            thresholds=thresholds,
            options=options[table.name],
            progress=say,
        )
        results += [{"table": str(table.name), **_result_row(p)} for p in done.partitions]
    echo(render_rows(results, state.output, RESULT_COLUMNS))
    _exit_if_conflicts(results)


def _warn_old_partition_syntax(partitions: tuple[str, ...], partition_by: Sequence[str]) -> None:
    """Say on stderr when a partition is written in the deprecated ``a=1/b=2`` syntax."""
    from versioned.storage.partition_spec import table_partition

    for text in partitions:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            table_partition(text, partition_by)
        for warning in caught:
            click.echo(f"warning: {warning.message}", err=True)


def _options(
    table: Any,
    rows_per_file: int | None,
    kind: Literal["minor", "major"] | None,
    all_tables: bool,
) -> CompactionOptions | None:
    """The compaction options of one table: an acid table compacts as ``kind`` says, else
    major when named, as Hive's initiator rules decide under ``--all``."""
    from versioned.options import CompactionOptions

    has_kinds = bool(table.layout.compaction_kinds)
    if not rows_per_file and not has_kinds:
        return None
    chosen = kind or ("auto" if all_tables else "major")
    return CompactionOptions(
        rows_per_file=rows_per_file or CompactionOptions.rows_per_file,
        kind=chosen if has_kinds else None,
    )


def _thresholds(
    all_tables: bool,
    min_versions: int | None,
    max_index_entries: int | None,
    min_small_files: int | None,
) -> CompactionThresholds | None:
    """The thresholds partitions must pass: the defaults for --all, filled in where a threshold
    option is given; None (every partition worth compacting) otherwise."""
    from versioned.options import CompactionThresholds

    given = (min_versions, max_index_entries, min_small_files)
    if not all_tables and all(v is None for v in given):
        return None
    default = CompactionThresholds()
    return CompactionThresholds(
        min_versions=min_versions or default.min_versions,
        max_index_entries=max_index_entries or default.max_index_entries,
        min_small_files=min_small_files or default.min_small_files,
    )


def _plan_row(table: Any, p: Any) -> dict[str, Any]:
    return {
        "table": str(table.name),
        "partition": p.partition or "(table)",
        "high_water_mark": p.high_water_mark,
        "versions": p.versions_compacted,
        "files": p.files_removed,
        "rows_estimate": p.rows,
        "files_to_write": p.files_added,
        "why": p.message,
    }


def _exit_if_conflicts(results: list[dict[str, Any]]) -> None:
    """Exit with the conflict code when writers kept a partition from being compacted."""
    conflicts = [r for r in results if r["status"] == "conflict"]
    if conflicts:
        click.echo(
            f"{len(conflicts)} partition(s) left as they were: writers kept committing to "
            "them first. Nothing was lost; run the compaction again later.",
            err=True,
        )
        click.get_current_context().exit(CommitConflictError.exit_code)


def _result_row(p: Any) -> dict[str, Any]:
    return {
        "partition": p.partition or "(table)",
        "status": p.status,
        "version": p.version,
        "high_water_mark": p.high_water_mark,
        "versions": p.versions_compacted,
        "rows": p.rows,
        "tombstones": p.tombstones,
        "files_removed": p.files_removed,
        "files_added": p.files_added,
        "seconds": p.seconds,
    }


def _writable_tables(state: CliContext, say: Any) -> list[Any]:
    from versioned.api.table import Table

    found = []
    for info in state.catalog.tables():
        if not Table(state.catalog, info).layout.supports("compact"):
            continue
        try:
            found.append(state.catalog.table(info.spec.name, need="write"))
        except PermissionDeniedError:
            say(f"skipping {info.spec.name}: no write permission")
    return found


@click.command("vacuum")
@click.argument("name", metavar="DB.TABLE")
@click.option(
    "--retain-hours",
    type=click.FloatRange(min=0),
    default=168.0,
    show_default=True,
    help="Keep every snapshot current within this many hours readable.",
)
@click.option(
    "--grace-hours",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Leave unlisted files younger than this (writes in progress).",
)
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages on stderr.")
@output_option
@pass_cli
def vacuum(
    state: CliContext,
    name: str,
    retain_hours: float,
    grace_hours: float,
    dry_run: bool,
    quiet: bool,
) -> None:
    """Delete files of DB.TABLE that no snapshot within the retention reads, and orphans.

    Orphans are files of failed or killed writes that no commit lists, older than the grace
    period. Time travel (--as-of) works back to the retention and fails clearly beyond it.
    The dead-letter folder is never touched.

    \b
    Examples:
      versioned vacuum test.sell --dry-run
      versioned vacuum test.sell --retain-hours 24
    """
    table = state.table(name, "write", now=False)  # the vacuum reads it and checks write once
    result = table.vacuum(
        retain_hours, grace_hours=grace_hours, dry_run=dry_run, progress=progress_printer(quiet)
    )
    record = result.to_dict()
    if dry_run:
        record["paths"] = list(result.paths)
    echo(render_record(record, state.output))


COMMANDS = [compact, vacuum]
