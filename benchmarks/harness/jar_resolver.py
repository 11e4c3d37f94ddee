"""`make jars`: the pinned jar sets resolved with Maven into the checkout's cache, once.

For each set of ``jars/pins.toml`` (or those named): when ``.jars/<set>/`` holds exactly the
jars ``jars/pins.lock`` lists, with their sha256, nothing else happens (no Maven, no network:
about a second for every set). A missing set is resolved with Maven (``dependency:copy-
dependencies`` of a pom written for it, with Maven's own checksum checks strict) into a
scratch folder, checked against the lock, and only then renamed into place. A jar that
differs from the lock, in the cache or as Maven serves it, fails the run and says which.
``--lock`` (`make jars-lock`) resolves the sets anew and writes their lines of the lock
instead: the one way a pin changes.

    python -m benchmarks.harness.jar_resolver resolve [--lock] [SET ...]
    python -m benchmarks.harness.jar_resolver pyspark LINE   # the PySpark release of a line
    python -m benchmarks.harness.jar_resolver lines          # the lines with a virtualenv
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from benchmarks.harness.jars import (
    CACHE,
    LOCK,
    PINS,
    JarSet,
    LockedSet,
    format_lock,
    read_lock,
    read_pins,
)

PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


class JarsError(RuntimeError):
    """`make jars` cannot put a set in place; the message says why and what to do."""


@dataclass(frozen=True)
class Outcome:
    """What `resolve` did with one set."""

    name: str
    jars: int
    megabytes: float
    fetched: bool


def sha256(path: Path) -> str:
    """The hex sha256 of the file ``path``."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def differences(folder: Path, expected: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """The jars of ``folder`` against ``expected`` (file -> sha256): those missing, those
    not expected, and those whose sha256 differs."""
    present = {path.name for path in folder.glob("*.jar")} if folder.is_dir() else set()
    missing = sorted(set(expected) - present)
    unexpected = sorted(present - set(expected))
    changed = sorted(
        file for file in set(expected) & present if sha256(folder / file) != expected[file]
    )
    return missing, unexpected, changed


def pom(jar_set: JarSet) -> str:
    """A pom whose dependencies are the set's artifacts, with its exclusions."""
    exclusions = "".join(
        "<exclusion><groupId>{}</groupId><artifactId>{}</artifactId></exclusion>".format(
            *map(escape, name.split(":", 1))
        )
        for name in jar_set.exclude
    )
    dependencies = "".join(
        "<dependency><groupId>{}</groupId><artifactId>{}</artifactId><version>{}</version>"
        "<exclusions>{}</exclusions></dependency>\n".format(
            *map(escape, coordinate.split(":")), exclusions
        )
        for coordinate in jar_set.artifacts
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "<modelVersion>4.0.0</modelVersion>\n"
        f"<groupId>versioned.jars</groupId><artifactId>{escape(jar_set.name)}</artifactId>"
        "<version>0</version><packaging>pom</packaging>\n"
        f"<dependencies>\n{dependencies}</dependencies>\n</project>\n"
    )


def fetch(jar_set: JarSet, scratch: Path, *, maven: str) -> Path:
    """Resolve the set with Maven into ``scratch/jars`` (a new folder); that folder."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    (scratch / "pom.xml").write_text(pom(jar_set))
    out = scratch / "jars"
    command = [
        maven,
        "--batch-mode",
        "--quiet",
        "--strict-checksums",
        "-f",
        str(scratch / "pom.xml"),
        f"{PLUGIN}:copy-dependencies",
        f"-DoutputDirectory={out}",
        "-DincludeScope=runtime",
        f"-DexcludeTransitive={'false' if jar_set.dependencies else 'true'}",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    except FileNotFoundError as exc:
        raise JarsError(f"Maven ({maven}) is not installed: apt-get install maven") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-25:])
        raise JarsError(f"Maven could not resolve the {jar_set.name!r} jars:\n{tail}")
    return out


def install(fetched: Path, folder: Path) -> None:
    """Put the folder ``fetched`` in the place of ``folder`` (a rename: never half there)."""
    if folder.exists():
        shutil.rmtree(folder)
    fetched.rename(folder)


def megabytes(folder: Path) -> float:
    """The size of the jars in ``folder``, in MB."""
    return sum(path.stat().st_size for path in folder.glob("*.jar")) / 1e6


def check_cached(jar_set: JarSet, entry: LockedSet, folder: Path) -> bool:
    """Whether ``folder`` holds the set as locked; False when jars are missing (fetch
    again). Raises `JarsError` when a jar there differs from the lock or is not in it."""
    missing, unexpected, changed = differences(folder, entry.jars)
    wrong = [f"sha256 differs: {name}" for name in changed]
    wrong += [f"not in the lock: {name}" for name in unexpected]
    if wrong:
        raise JarsError(
            f"{folder} does not hold what jars/pins.lock says ({'; '.join(wrong)}). "
            f"Delete {folder} and run `make jars SETS={jar_set.name}` again."
        )
    return not missing


def resolve_set(
    jar_set: JarSet, entry: LockedSet | None, *, relock: bool, cache: Path, maven: str
) -> tuple[Outcome, LockedSet]:
    """Put one set in ``cache`` as the lock says (``relock``: as Maven resolves it now)."""
    folder = cache / jar_set.name
    if not relock:
        if entry is None or entry.spec != jar_set.spec:
            raise JarsError(
                f"the pins of {jar_set.name!r} are not the ones jars/pins.lock was written "
                f"from (lock: {entry.spec if entry else 'none'!r}; pins: {jar_set.spec!r}): "
                f"run `make jars-lock SETS={jar_set.name}` and commit jars/pins.lock"
            )
        if check_cached(jar_set, entry, folder):
            return Outcome(jar_set.name, len(entry.jars), megabytes(folder), False), entry
    print(f"jars {jar_set.name:<10} resolving with Maven ...", flush=True)
    fetched = fetch(jar_set, cache / f".{jar_set.name}.partial", maven=maven)
    got = {path.name: sha256(path) for path in sorted(fetched.glob("*.jar"))}
    if not got:
        raise JarsError(f"Maven resolved no jar for {jar_set.name!r}")
    if not relock and entry is not None and got != entry.jars:
        missing, unexpected, changed = differences(fetched, entry.jars)
        raise JarsError(
            f"Maven served {jar_set.name!r} jars that are not the locked ones (missing "
            f"{missing}, not locked {unexpected}, sha256 differs {changed}); nothing was "
            f"installed. If a pin changed on purpose, run `make jars-lock SETS={jar_set.name}`."
        )
    install(fetched, folder)
    shutil.rmtree(fetched.parent, ignore_errors=True)
    return Outcome(jar_set.name, len(got), megabytes(folder), True), LockedSet(jar_set.spec, got)


def resolve(
    names: Sequence[str] = (),
    *,
    relock: bool = False,
    pins: Path = PINS,
    lock: Path = LOCK,
    cache: Path = CACHE,
    maven: str = "mvn",
    report: Callable[[Outcome], object] = lambda outcome: None,
) -> list[Outcome]:
    """Put the sets ``names`` (default: every pinned set) in ``cache``, calling ``report``
    after each; ``relock`` writes their lines of ``lock`` from what Maven resolves.
    Raises `JarsError`."""
    sets = read_pins(pins).sets
    unknown = sorted(set(names) - set(sets))
    if unknown:
        raise JarsError(
            f"no such jar set: {', '.join(unknown)} (jars/pins.toml has {sorted(sets)})"
        )
    locked = read_lock(lock)
    cache.mkdir(parents=True, exist_ok=True)
    outcomes = []
    for name in names or sorted(sets):
        outcome, entry = resolve_set(
            sets[name], locked.get(name), relock=relock, cache=cache, maven=maven
        )
        locked[name] = entry
        outcomes.append(outcome)
        report(outcome)
    if relock:
        lock.write_text(format_lock({name: locked[name] for name in locked if name in sets}))
    return outcomes


def say(done: Outcome) -> None:
    """One line of `make jars` about one set."""
    how = "resolved with Maven" if done.fetched else "in place, sha256 checked"
    print(f"jars {done.name:<10} {done.jars:3d} jars {done.megabytes:7.1f} MB  {how}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line of `make jars`, `make jars-lock` and `make spark-venvs`."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness.jar_resolver")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("resolve", help="put the pinned jar sets in .jars/")
    run.add_argument("--lock", action="store_true", help="write the lock from what resolves")
    run.add_argument("sets", nargs="*", help="the sets (default: all)")
    line = commands.add_parser("pyspark", help="the PySpark release of a Spark line")
    line.add_argument("line")
    commands.add_parser("lines", help="the Spark lines the pinned sets need a virtualenv for")
    args = parser.parse_args(argv)
    pins = read_pins()
    if args.command == "lines":
        print(" ".join(sorted(pins.pyspark)))
        return 0
    if args.command == "pyspark":
        if args.line not in pins.pyspark:
            print(f"jars/pins.toml names no PySpark for Spark {args.line}", file=sys.stderr)
            return 2
        print(pins.pyspark[args.line])
        return 0
    began = time.monotonic()
    maven = os.environ.get("MVN", "mvn")
    try:
        outcomes = resolve(args.sets, relock=args.lock, maven=maven, report=say)
    except JarsError as exc:
        print(f"make jars FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"jars: {len(outcomes)} sets in {CACHE} in {time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
