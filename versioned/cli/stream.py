"""`versioned stream`: records from stdin or files into a table, committed continuously."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from versioned.cli.context import CliContext, output_option, pass_cli, progress_printer
from versioned.cli.line_source import LineReader, check_sources
from versioned.cli.render import echo, render_record
from versioned.errors import InputError
from versioned.schema import TableSpec

if TYPE_CHECKING:  # the streaming client (pyarrow) is imported when the command runs
    from versioned.cli.stream_pump import StreamPolicy, StreamPump
    from versioned.streaming import EndPoint, StreamingConnection
    from versioned.streaming.encoding import RecordWriter

DEFAULT_COMMIT_EVERY = 10_000
DEFAULT_COMMIT_SECONDS = 1.0
DEFAULT_BATCH_SIZE = 10
DEFAULT_BATCH_SECONDS = 60.0
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_AGENT = "versioned-stream"
STREAM_FORMATS = ("delimited", "json", "regex")


@click.command("stream")
@click.argument("name", metavar="DB.TABLE")
@click.argument("inputs", nargs=-1, metavar="[FILE]...")
@click.option(
    "--partition",
    metavar="K=V,...",
    default=None,
    help="The partition to write: every partition column once, any order; values escaped as "
    "in directory names (%2C is a comma); empty or __HIVE_DEFAULT_PARTITION__ is null.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(STREAM_FORMATS),
    default="delimited",
    show_default=True,
    help="delimited: fields split by --delimiter; json: one JSON object per line; regex: "
    "--regex groups, one per data column in table order.",
)
@click.option(
    "--fields",
    default=None,
    metavar="A,,B",
    help="delimited: the column of each input field in order; an empty name drops the "
    "field [default: the table's data columns in order].",
)
@click.option(
    "--delimiter",
    default=",",
    show_default=True,
    help="delimited: the text between fields (\\t is a tab); no quoting.",
)
@click.option("--regex", default=None, help="regex: the expression matching a whole line.")
@click.option("--ignore-unknown", is_flag=True, help="json: ignore keys that are not data columns.")
@click.option(
    "--dead-letter",
    is_flag=True,
    help="Set records that cannot be written aside in the table's _dead_letter/ folder "
    "(counted as rejected) and go on [default: stop at the first, exit 2].",
)
@click.option(
    "--commit-every",
    type=click.IntRange(min=1),
    default=DEFAULT_COMMIT_EVERY,
    show_default=True,
    metavar="N",
    help="Commit after N records.",
)
@click.option(
    "--commit-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_COMMIT_SECONDS,
    show_default=True,
    metavar="S",
    help="Commit S seconds after a transaction's first record, also while input is quiet.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    metavar="T",
    help="Transactions fetched at once (one transaction batch).",
)
@click.option(
    "--batch-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_BATCH_SECONDS,
    show_default=True,
    metavar="S",
    help="Close a batch this long after it was fetched, once its transaction is committed.",
)
@click.option("--create-partition", is_flag=True, help="Create the partition if it does not exist.")
@click.option(
    "--agent",
    default=DEFAULT_AGENT,
    show_default=True,
    help="Who is streaming; recorded with every commit (history's metrics).",
)
@click.option(
    "--transaction-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    metavar="S",
    help="The catalog aborts transactions not heartbeated for S seconds (they are "
    "heartbeated every S/2 while the command runs).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress messages on stderr.")
@output_option
@pass_cli
def stream(state: CliContext, name: str, inputs: tuple[str, ...], **options: Any) -> None:
    """Stream records (one per line) from stdin or FILEs into DB.TABLE, in small commits.

    Each line is one record (its \\n or \\r\\n removed; empty lines are skipped), read from
    the FILEs in order (- is stdin) or from stdin. Records go to one partition (--partition)
    in transactions committed every N records or S seconds after a transaction's first
    record, whichever comes first: many records per commit give throughput, the time limit
    keeps records visible within about S seconds when the input slows (Hive's streaming
    guideline). A quiet input commits nothing. The key holds as for upsert: a record whose
    key exists replaces that row. Progress goes to stderr about once a second; the summary
    (records, rejected, transactions, batches, seconds, records_per_s) to stdout.

    \b
    Defaults and why:
      --commit-every 10000   large enough for full speed, small enough to replay quickly
      --commit-seconds 1     records show within about a second of arriving
      --batch-size 10        acid tables write one delta directory per batch: fewer files
                             (on S3 one per transaction: an object cannot grow)
      --batch-seconds 60     an open batch holds back compaction (Hive's advice: close it
                             after a while even with transactions unused)

    \b
    A record that cannot be written (unparsable, wrong type, null key) stops the stream:
    its transaction is aborted (nothing from that transaction's first line on is
    committed; earlier transactions stay), the summary is printed, and the error names the
    line; exit 2. With --dead-letter it is set aside with its reason and the stream goes
    on. Ctrl-C or SIGTERM commits the records read so far (an incomplete last line is
    dropped), closes cleanly, prints the summary (status: interrupted) and the line saying
    what was committed, and exits 130 (SIGINT) or 143 (SIGTERM); a second Ctrl-C stops at
    once and the open transaction expires uncommitted.

    \b
    Examples:
      tail -F app.log | versioned stream logs.events --partition day=2024-01-01 \\
          --fields ts,level,msg --create-partition
      versioned stream test.alerts --partition continent=Asia,country=India \\
          --fields id,,msg alerts-1.csv alerts-2.csv
      kafkacat -C -t events | versioned stream logs.raw --format json --ignore-unknown \\
          --dead-letter --commit-every 50000 --commit-seconds 5
      versioned stream logs.access --format regex --regex '(\\S+) (\\S+) (.*)' < access.log
    """
    from versioned.cli.stream_pump import StreamPump

    check_sources(inputs)
    say = progress_printer(options["quiet"])
    prepared = _connect(state, name, options, say)
    outcome = "failed"
    with _stop_on_signals() as signals:
        pump = StreamPump(
            prepared.connection,
            prepared.writer,
            prepared.policy,
            say=say,
            stop=signals.event,
        )
        try:
            reader = LineReader(inputs).start()
            pump.run(reader)
            # A signal decides, also when the input ended meanwhile: Ctrl-C on a terminal
            # ends the command feeding the pipe too, and its end of input may come first.
            outcome = "end of input" if signals.signum is None else "interrupted"
            if reader.partial and outcome == "interrupted":
                say("an incomplete last line (no line end yet) was not written")
        finally:
            try:
                pump.close()
            finally:
                pump.progress(final=True)
                _summary(state, name, prepared.label, outcome, pump)
    if pump.counts.rejected:
        where = state.catalog.full_path(prepared.connection.endpoint.dead_letter_dir)
        say(f"{pump.counts.rejected:,} rejected records are in {where}/stream=<transaction>/")
    if signals.signum is not None:
        if state.interrupts is not None:  # the line every interrupted command ends with
            click.echo(state.interrupts.line(), err=True)
        click.get_current_context().exit(128 + signals.signum)


@dataclass(frozen=True)
class _Prepared:
    """What `_connect` prepared: the connection, writer and policy."""

    connection: StreamingConnection
    writer: RecordWriter
    policy: StreamPolicy
    label: str | None


def _connect(
    state: CliContext, name: str, options: dict[str, Any], say: Callable[[str], None]
) -> _Prepared:
    """Check the options against the table and open the connection (nothing written yet)."""
    from versioned.cli.stream_pump import StreamPolicy
    from versioned.streaming import EndPoint, InvalidPartition

    table = state.table(name, "write")  # a stream writes: ask for that grant
    spec = table.spec
    values = partition_values(spec, options["partition"])
    endpoint = EndPoint(state.catalog, table.name, values)
    writer = _writer(endpoint, options)
    label = ",".join(f"{k}={v}" for k, v in zip(spec.partition_by, values, strict=True))
    try:
        connection = endpoint.connect(
            create_partition=options["create_partition"],
            agent=options["agent"],
            transaction_timeout_s=options["transaction_timeout"],
        )
    except InvalidPartition as exc:
        raise InvalidPartition(
            f"table {spec.name} has no partition {label}: pass --create-partition to create it",
            partition=label,
        ) from exc
    policy = StreamPolicy(
        commit_every=options["commit_every"],
        commit_seconds=options["commit_seconds"],
        batch_size=options["batch_size"],
        batch_seconds=options["batch_seconds"],
    )
    say(
        f"streaming into {spec.name}{f' ({label})' if label else ''}: a commit every "
        f"{policy.commit_every:,} records or {policy.commit_seconds:g} s"
    )
    return _Prepared(connection=connection, writer=writer, policy=policy, label=label or None)


def partition_values(spec: TableSpec, text: str | None) -> list[str | None]:
    """The values of ``--partition`` in the table's partition-column order.

    Raises:
        InputError: The spec is malformed, lacks partition columns or names others; or the
            table is not partitioned and a spec was given (or the other way round).
    """
    from versioned.collections.matching import parse_partition_spec

    keys = spec.partition_by
    example = ",".join(f"{k}=..." for k in keys)
    if not keys:
        if text is not None:
            raise InputError(f"table {spec.name} is not partitioned: leave out --partition")
        return []
    if text is None:
        raise InputError(
            f"table {spec.name} is partitioned by ({', '.join(keys)}): give --partition {example}"
        )
    given = parse_partition_spec(text)
    missing = [k for k in keys if k not in given]
    unknown = [k for k in given if k not in keys]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"lacks {', '.join(missing)}")
        if unknown:
            problems.append(f"names {', '.join(unknown)} (no such partition column)")
        raise InputError(
            f"--partition {text!r} {' and '.join(problems)}: table {spec.name} is partitioned "
            f"by ({', '.join(keys)}); give --partition {example}",
            partition=text,
        )
    return [given[k] or None for k in keys]


def _writer(endpoint: EndPoint, options: dict[str, Any]) -> RecordWriter:
    """The record writer ``--format`` and its options ask for."""
    from versioned import streaming as vs

    fmt = options["fmt"]
    _only(fmt, "delimited", fields=options["fields"], delimiter=options["delimiter"] != ",")
    _only(fmt, "json", ignore_unknown=options["ignore_unknown"])
    _only(fmt, "regex", regex=options["regex"])
    dead_letter = options["dead_letter"]
    if fmt == "json":
        return vs.StrictJsonWriter(
            endpoint=endpoint, ignore_unknown=options["ignore_unknown"], dead_letter=dead_letter
        )
    if fmt == "regex":
        if options["regex"] is None:
            raise click.UsageError("--format regex needs --regex PATTERN")
        return vs.StrictRegexWriter(options["regex"], endpoint=endpoint, dead_letter=dead_letter)
    fields = _field_names(options["fields"], endpoint.spec)
    delimiter = "\t" if options["delimiter"] == "\\t" else options["delimiter"]
    return vs.DelimitedInputWriter(fields, delimiter, endpoint=endpoint, dead_letter=dead_letter)


def _only(fmt: str, wanted: str, **given: Any) -> None:
    for option, value in given.items():
        if value and fmt != wanted:
            flag = "--" + option.replace("_", "-")
            raise click.UsageError(f"{flag} applies to --format {wanted}, not {fmt}")


def _field_names(text: str | None, spec: TableSpec) -> Sequence[str | None]:
    if text is None:
        return [c.name for c in spec.data_columns]
    return [name.strip() or None for name in text.split(",")]


def _summary(
    state: CliContext, name: str, label: str | None, outcome: str, pump: StreamPump
) -> None:
    c = pump.counts
    echo(
        render_record(
            {
                "table": name,
                "partition": label,
                "status": outcome,
                "records": c.records,
                "rejected": c.rejected,
                "transactions": c.transactions,
                "batches": c.batches,
                "seconds": round(c.seconds, 3),
                "records_per_s": round(c.per_second, 1),
            },
            state.output,
        )
    )


class _Signals:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None

    def handle(self, signum: int, frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
        self.event.set()
        # A second signal stops at once (the open transaction expires uncommitted).
        signal.signal(
            signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
        )


@contextmanager
def _stop_on_signals() -> Iterator[_Signals]:
    """SIGINT and SIGTERM ask the stream to stop (handlers restored afterwards)."""
    signals = _Signals()
    previous = {s: signal.signal(s, signals.handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield signals
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


COMMANDS = [stream]
