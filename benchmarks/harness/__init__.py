"""What every benchmark shares: the Spark session, timing, medians, stamped results, tables.

* `spark_session` / `shared_session`: the session a benchmark runs in (``session``);
* `Meter`, `PeakRss`, `contention`: one measured operation (``meter``);
* `repeat`, `interleave`, `warm_up`, `median`: repeated and compared runs (``timing``);
* `stamp`, `machine`: the commit, date and machine of a measurement (``record``);
* `ResultsFile`, `write_json`: results documents (``results``); `table`: Markdown (``markdown``);
* `log`: progress lines.

The runner behind ``python -m benchmarks`` is `benchmarks.harness.runner`.
"""

from __future__ import annotations

from benchmarks.harness.log import log
from benchmarks.harness.markdown import row, table
from benchmarks.harness.meter import Meter, PeakRss, contention
from benchmarks.harness.record import machine, stamp
from benchmarks.harness.results import (
    ResultsFile,
    command_line,
    read_json,
    rerender,
    save,
    write_json,
)
from benchmarks.harness.session import shared_session, spark_session
from benchmarks.harness.timing import (
    Interleaved,
    checkpoints,
    interleave,
    median,
    medians,
    repeat,
    rotated,
    warm_up,
)

__all__ = [
    "Interleaved",
    "Meter",
    "PeakRss",
    "ResultsFile",
    "checkpoints",
    "command_line",
    "contention",
    "interleave",
    "log",
    "machine",
    "median",
    "medians",
    "read_json",
    "repeat",
    "rerender",
    "rotated",
    "row",
    "save",
    "shared_session",
    "spark_session",
    "stamp",
    "table",
    "warm_up",
    "write_json",
]
