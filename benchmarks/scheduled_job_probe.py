"""One `versioned` command in this new process, with the time of each of its phases.

The child side of `benchmarks.scheduled_job`: ``python -m benchmarks.scheduled_job_probe OUT
-- ARGS`` runs ``versioned ARGS`` as the console script does (`versioned.cli.main.main`), after
wrapping (in this process only) the steps a scheduled job goes through, and writes their times
to OUT as JSON:

- ``imports``: importing versioned's command line (and through it pyarrow, SQLAlchemy, ...);
- ``catalog``: opening the catalog (`Catalog.__init__`, the metastore's engine);
- ``spark_start``: `get_or_create_spark` (the JVM, the SparkContext, the session);
- ``operation``: the table operation itself (`Table.upsert`), with, inside it, the wall time
  of every Spark job it ran (``spark_jobs``: from Spark's status store) and of the Python
  workers' first start (``python_workers``, the acid layout's bucket hash);
- ``command``: the whole command from the first line of `main` to its return.

The parent adds the interpreter's start and the JVM's shutdown (the process's wall time minus
``command`` and ``imports``). ``--start-only``: start the same SparkSession and stop it (the
reference the fixed cost is measured against).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()


def _timed(owner: Any, name: str, phases: dict[str, float], key: str) -> None:
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        begun = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            phases[key] = phases.get(key, 0.0) + time.perf_counter() - begun

    setattr(owner, name, wrapper)


def _spark_jobs() -> list[dict[str, Any]]:
    """Every job of this process's SparkContext: id, description, wall seconds."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        return []
    store = context._jsc.sc().statusStore()
    jobs = store.jobsList(None)
    out = []
    for i in range(jobs.size()):
        job = jobs.apply(i)
        submitted, completed = job.submissionTime(), job.completionTime()
        if submitted.isEmpty() or completed.isEmpty():
            continue
        seconds = (completed.get().getTime() - submitted.get().getTime()) / 1000
        out.append({"id": job.jobId(), "name": str(job.name())[:80], "seconds": seconds})
    return sorted(out, key=lambda j: j["id"])


def probe(out: Path, args: list[str]) -> None:
    """Run ``versioned ARGS`` and write the phases to ``out``."""
    phases: dict[str, float] = {}
    begun = time.perf_counter()
    import versioned.cli.main as cli_main

    phases["imports"] = time.perf_counter() - begun
    import versioned.api.catalog as catalog_module
    import versioned.api.table as table_module
    import versioned.engine.spark.session as session_module

    _timed(catalog_module.Catalog, "__init__", phases, "catalog")
    _timed(session_module, "get_or_create_spark", phases, "spark_start")
    _timed(table_module.Table, "upsert", phases, "operation")
    begun = time.perf_counter()
    code = 0
    try:
        cli_main.cli.main(args=args, prog_name="versioned", standalone_mode=False)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    phases["command"] = time.perf_counter() - begun
    jobs = _spark_jobs()
    record = {"phases": phases, "spark_jobs": jobs, "exit_code": code}
    record["since_interpreter"] = time.perf_counter() - STARTED
    out.write_text(json.dumps(record))


def start_only(out: Path, conf_file: Path) -> None:
    """Start the SparkSession a command starts (``conf_file``: its master and settings, as
    versioned builds them), with PySpark alone, and stop it."""
    begun = time.perf_counter()
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    imported = time.perf_counter()
    settings = json.loads(conf_file.read_text())
    conf = SparkConf().setMaster(settings["master"]).setAppName("versioned")
    conf.setAll(list(settings["conf"].items()))
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter()
    spark.stop()
    phases = {"imports": imported - begun, "spark_start": started - imported}
    phases["spark_stop"] = time.perf_counter() - started
    record = {"phases": phases, "since_interpreter": time.perf_counter() - STARTED}
    out.write_text(json.dumps(record))


if __name__ == "__main__":
    target = Path(sys.argv[1])
    if sys.argv[2] == "--start-only":
        start_only(target, Path(sys.argv[3]))
    else:
        assert sys.argv[2] == "--", "usage: OUT -- ARGS | OUT --start-only CONF"
        probe(target, sys.argv[3:])
