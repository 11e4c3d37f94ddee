"""The JVM libraries of the tests and benchmarks, taken from the checkout's cache.

Sets of jars named by purpose ("delta", "iceberg", "s3a", ...) are pinned in
``jars/pins.toml``; `make jars` resolves them once into ``.jars/<set>/`` (git-ignored) and
checks each jar against the sha256 in ``jars/pins.lock`` (`benchmarks.harness.jar_resolver`).
A test or benchmark asks for a set here (`spark_jars`, `classpath`) and gets the cached files
or a `MissingJarsError` that says what to run; nothing here reaches the network. A set built
for another Spark line than this interpreter's PySpark runs under `spark_python`.

Standard library only: `make jars` runs the resolver with the machine's Python, before any
virtualenv exists.
"""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PINS = REPO / "jars" / "pins.toml"
LOCK = REPO / "jars" / "pins.lock"
CACHE = REPO / ".jars"


class MissingJarsError(RuntimeError):
    """A set's jars, or the virtualenv of its Spark line, are not there; says what to run."""


@dataclass(frozen=True)
class JarSet:
    """One set of ``jars/pins.toml``: what it is for, its Spark line and its coordinates."""

    name: str
    purpose: str
    spark: str
    artifacts: tuple[str, ...]
    dependencies: bool = False
    exclude: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        """Everything the set's jars are resolved from, on one line (the lock records it)."""
        words = [*self.artifacts]
        if self.dependencies:
            words.append("+dependencies")
        words.extend(f"-{name}" for name in self.exclude)
        return " ".join(words)


@dataclass(frozen=True)
class Pins:
    """``jars/pins.toml``: the sets, and the PySpark release of each Spark line a set needs."""

    sets: dict[str, JarSet]
    pyspark: dict[str, str]


@dataclass(frozen=True)
class LockedSet:
    """One set of ``jars/pins.lock``: the spec its jars came from and each jar's sha256."""

    spec: str
    jars: dict[str, str]


def _checked(path: Path, jar_set: JarSet) -> JarSet:
    """``jar_set``, once its coordinates have the shapes Maven takes (else ValueError)."""
    wrong = [a for a in jar_set.artifacts if len(a.split(":")) != 3 or "" in a.split(":")]
    wrong += [e for e in jar_set.exclude if len(e.split(":")) != 2 or "" in e.split(":")]
    if wrong or not jar_set.artifacts:
        raise ValueError(
            f"{path}: set {jar_set.name!r}: artifacts are group:artifact:version and "
            f"exclusions group:artifact, at least one artifact (not {wrong})"
        )
    return jar_set


def read_pins(path: Path = PINS) -> Pins:
    """The sets and Spark lines of the pin file ``path``."""
    doc = tomllib.loads(path.read_text())
    sets = {
        name: _checked(
            path,
            JarSet(
                name=name,
                purpose=body["purpose"],
                spark=body["spark"],
                artifacts=tuple(body["artifacts"]),
                dependencies=bool(body.get("dependencies", False)),
                exclude=tuple(body.get("exclude", ())),
            ),
        )
        for name, body in doc.get("sets", {}).items()
    }
    return Pins(sets=sets, pyspark=dict(doc.get("spark", {})))


LOCK_HEADER = """\
# The sha256 of every jar `make jars` puts in .jars/<set>/, under the line naming the set and
# the pins it was resolved from (jars/pins.toml). Written by `make jars-lock`, not by hand.
"""


def read_lock(path: Path = LOCK) -> dict[str, LockedSet]:
    """The sets of the lock file ``path`` (none when it does not exist)."""
    if not path.exists():
        return {}
    locked: dict[str, LockedSet] = {}
    current: LockedSet | None = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("["):
            name, _, spec = line[1:].partition("] ")
            current = locked[name] = LockedSet(spec=spec.strip(), jars={})
            continue
        digest, _, file = line.partition("  ")
        if current is None or len(digest) != 64 or not file:
            raise ValueError(f"{path}:{number}: not a lock line: {line!r}")
        current.jars[file] = digest
    return locked


def format_lock(locked: dict[str, LockedSet]) -> str:
    """The text of a lock file holding ``locked`` (sets and jars in name order)."""
    lines = [LOCK_HEADER]
    for name in sorted(locked):
        entry = locked[name]
        lines.append(f"[{name}] {entry.spec}")
        lines.extend(f"{entry.jars[file]}  {file}" for file in sorted(entry.jars))
        lines.append("")
    return "\n".join(lines)


def jars(name: str, *, cache: Path = CACHE, lock: Path = LOCK) -> list[Path]:
    """The jar files of the set ``name`` in the cache, as the lock lists them.

    Raises:
        MissingJarsError: the lock has no such set, or a jar is not in the cache.
    """
    entry = read_lock(lock).get(name)
    if entry is None:
        raise MissingJarsError(f"no jar set {name!r} in {lock} (jars/pins.toml names the sets)")
    paths = [cache / name / file for file in sorted(entry.jars)]
    missing = [path.name for path in paths if not path.is_file()]
    if missing:
        raise MissingJarsError(
            f"the {name!r} jars are not in {cache / name} (missing {', '.join(missing)}): "
            f"run `make jars` (or `make jars SETS={name}`) in {REPO}"
        )
    return paths


def has_jars(name: str, *, cache: Path = CACHE, lock: Path = LOCK) -> bool:
    """Whether the cache holds every jar of the set ``name``."""
    try:
        jars(name, cache=cache, lock=lock)
    except MissingJarsError:
        return False
    return True


def spark_jars(name: str) -> str:
    """The value of ``spark.jars`` that puts the set ``name`` on Spark's classpath."""
    return ",".join(str(path) for path in jars(name))


def classpath(name: str) -> str:
    """The set ``name`` as a JVM class path (``java -cp``)."""
    return os.pathsep.join(str(path) for path in jars(name))


def spark_line(version: str) -> str:
    """The Spark line (major.minor) of a release: ``4.3.0`` -> ``4.3``."""
    return ".".join(version.split(".")[:2])


def peer_venv(line: str, *, repo: Path = REPO) -> Path:
    """The virtualenv of the Spark line ``line`` (`make spark-venvs` builds it)."""
    return repo / f".venv-spark{line}"


def spark_python(name: str, *, pins: Path = PINS, repo: Path = REPO) -> Path:
    """The Python whose PySpark is of the Spark line the set ``name`` is built for: this
    interpreter when its PySpark is, else that line's virtualenv (`peer_venv`).

    Raises:
        MissingJarsError: the set is not pinned, or its line's virtualenv is not built.
    """
    jar_set = read_pins(pins).sets.get(name)
    if jar_set is None:
        raise MissingJarsError(f"no jar set {name!r} in {pins}")
    here = metadata.version("pyspark")
    if spark_line(here) == jar_set.spark:
        return Path(sys.executable)
    venv = peer_venv(jar_set.spark, repo=repo)
    if not (venv / ".installed").exists():
        raise MissingJarsError(
            f"the {name!r} jars are built for Spark {jar_set.spark}, this is PySpark {here}: "
            f"run `make spark-venvs` in {repo} (it builds {venv.name})"
        )
    return venv / "bin" / "python"
