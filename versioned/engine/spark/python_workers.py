"""One check per session that Spark's Python workers can run versioned's code.

Acid upserts (Hive's bucket ids), the version layout's bulk load (Bloom pieces), `vm.apply` and
the change stream run Python in Spark's worker processes. A session whose workers run another
interpreter than the one versioned is installed in (a virtualenv's python started without
activating it, ``PYSPARK_PYTHON`` unset) failed there only after the first task's retries, with
a long ``PythonException … No module named 'versioned'``. `require_python_workers` runs one
one-row task first, once per session and worker interpreter, and says in one line which
interpreter the workers run and how to point them at the right one.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from typing import Any

from versioned.errors import ConfigError

WORKER_MODULES = ("pyarrow", "versioned", "sqlalchemy", "pyorc", "pybloom_live")
"""What versioned's code in the workers imports (a missing one fails the check)."""

_MISSING = re.compile(r"No module named '([^']+)'")
_CHECKED: set[tuple[str, str]] = set()  # (application id, worker interpreter) that passed


def require_python_workers(spark: Any) -> None:
    """Check, once per session and worker interpreter, that Spark's Python workers import
    versioned and its dependencies.

    Raises:
        ConfigError: They cannot: one line naming the interpreter, the module and the fix.
    """
    context = spark.sparkContext
    key = (str(context.applicationId), str(context.pythonExec))
    if key in _CHECKED:
        return
    try:
        spark.range(0, 1, 1, 1).mapInArrow(_import_all, "id long").collect()
    except Exception as exc:
        found = _MISSING.search(str(exc))
        if found is None:
            raise
        raise ConfigError(
            f"Spark's Python workers run {context.pythonExec}, which cannot import "
            f"{found.group(1)!r}: point them at the Python versioned is installed in "
            f"({sys.executable}) with PYSPARK_PYTHON or spark.pyspark.python (docs/cluster.md)"
        ) from None
    _CHECKED.add(key)


def _import_all(batches: Iterator[Any]) -> Iterator[Any]:
    for name in WORKER_MODULES:
        importlib.import_module(name)
    yield from batches
