"""`make jars` and the cache it fills (benchmarks/harness/jar_resolver.py, jars.py), on pins
of the test's own and a stand-in for Maven that serves files the test chooses: a set in place
and matching its lock starts no Maven; a changed, corrupted or unlocked jar fails loudly and
says what to do; a set Maven serves other bytes for is never installed; a missing set is
fetched once, checked, and renamed into place; a lookup of a missing set says to run `make
jars`. And the committed pins and lock agree with each other.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import pytest

from benchmarks.harness import jar_resolver, jars
from benchmarks.harness.jar_resolver import JarsError, resolve
from benchmarks.harness.jars import LockedSet, MissingJarsError

PINS = """
[spark]
"4.1" = "4.1.4"

[sets.tiny]
purpose = "a test's"
spark = "4.1"
artifacts = ["org.example:tiny:1.0", "org.example:tiny-storage:1.0"]

[sets.wide]
purpose = "a test's, with dependencies"
spark = "4.1"
artifacts = ["org.example:wide:2.0"]
dependencies = true
exclude = ["org.scala-lang:scala-library", "com.fasterxml.jackson.core:*"]
"""
SERVED = {"tiny-1.0.jar": "tiny classes", "tiny-storage-1.0.jar": "storage classes"}

# Maven as `fetch` runs it: writes the jars listed in served.json (file -> content) into
# -DoutputDirectory and appends its arguments to calls.jsonl, next to itself.
FAKE_MAVEN = """#!{python}
import json, pathlib, sys
here = pathlib.Path(__file__).parent
with open(here / "calls.jsonl", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
out = pathlib.Path(next(a for a in sys.argv if a.startswith("-DoutputDirectory=")).split("=", 1)[1])
out.mkdir(parents=True)
for name, content in json.loads((here / "served.json").read_text()).items():
    (out / name).write_text(content)
"""


class Maven:
    """The stand-in for Maven: what it serves and how often it ran."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.folder = folder
        self.path = folder / "mvn"
        self.path.write_text(FAKE_MAVEN.format(python=sys.executable))
        self.path.chmod(0o755)
        self.serve(SERVED)

    def serve(self, files: dict[str, str]) -> None:
        (self.folder / "served.json").write_text(json.dumps(files))

    @property
    def calls(self) -> list[list[str]]:
        log = self.folder / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def checkout(tmp_path: Path) -> dict[str, Path]:
    """Pins, lock and cache paths of a checkout of the test's own."""
    (tmp_path / "pins.toml").write_text(PINS)
    return {"pins": tmp_path / "pins.toml", "lock": tmp_path / "pins.lock", "cache": tmp_path / "c"}


@pytest.fixture
def maven(tmp_path: Path) -> Maven:
    return Maven(tmp_path / "maven")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cache_of(checkout: dict[str, Path]) -> dict[str, Path]:
    """The cache and lock of the test's checkout, as the lookups take them."""
    return {"cache": checkout["cache"], "lock": checkout["lock"]}


def run(checkout: dict[str, Path], maven: Maven, *names: str, relock: bool = False) -> list[str]:
    """`make jars SETS=names` (``relock``: `make jars-lock`) on the test's checkout; for each
    set, whether Maven ran."""
    outcomes = resolve(names, relock=relock, maven=str(maven.path), **checkout)
    return ["fetched" if done.fetched else "cached" for done in outcomes]


def test_jars_lock_records_every_jar_and_its_pins(checkout: dict[str, Path], maven: Maven) -> None:
    assert run(checkout, maven, "tiny", relock=True) == ["fetched"]
    locked = jars.read_lock(checkout["lock"])
    assert locked == {
        "tiny": LockedSet(
            "org.example:tiny:1.0 org.example:tiny-storage:1.0",
            {name: digest(content) for name, content in SERVED.items()},
        )
    }
    assert sorted(path.read_text() for path in jars.jars("tiny", **cache_of(checkout))) == sorted(
        SERVED.values()
    )


def test_a_set_in_place_is_checked_and_starts_no_maven(
    checkout: dict[str, Path], maven: Maven
) -> None:
    run(checkout, maven, "tiny", relock=True)
    assert run(checkout, maven, "tiny") == ["cached"]
    assert len(maven.calls) == 1  # only the relock's


def test_a_changed_jar_in_the_cache_fails_loudly(checkout: dict[str, Path], maven: Maven) -> None:
    run(checkout, maven, "tiny", relock=True)
    jar = checkout["cache"] / "tiny" / "tiny-storage-1.0.jar"
    jar.write_text("storage classes, corrupted")
    with pytest.raises(JarsError, match=r"sha256 differs: tiny-storage-1\.0\.jar") as caught:
        run(checkout, maven, "tiny")
    assert "make jars SETS=tiny" in str(caught.value)
    assert jar.read_text() == "storage classes, corrupted"  # left for a person to look at
    assert len(maven.calls) == 1


def test_a_jar_the_lock_does_not_name_fails_loudly(checkout: dict[str, Path], maven: Maven) -> None:
    run(checkout, maven, "tiny", relock=True)
    (checkout["cache"] / "tiny" / "stray-0.1.jar").write_text("")
    with pytest.raises(JarsError, match=r"not in the lock: stray-0\.1\.jar"):
        run(checkout, maven, "tiny")


def test_a_missing_set_is_fetched_checked_and_renamed_into_place(
    checkout: dict[str, Path], maven: Maven
) -> None:
    run(checkout, maven, "tiny", relock=True)
    (checkout["cache"] / "tiny" / "tiny-1.0.jar").unlink()
    assert run(checkout, maven, "tiny") == ["fetched"]
    assert jars.has_jars("tiny", **cache_of(checkout))
    assert sorted(os.listdir(checkout["cache"])) == ["tiny"]  # no scratch folder left


def test_jars_maven_serves_other_than_locked_are_never_installed(
    checkout: dict[str, Path], maven: Maven
) -> None:
    run(checkout, maven, "tiny", relock=True)
    maven.serve({**SERVED, "tiny-1.0.jar": "other classes"})
    (checkout["cache"] / "tiny" / "tiny-1.0.jar").unlink()
    with pytest.raises(JarsError, match=r"not the locked ones.*sha256 differs \['tiny-1.0.jar'\]"):
        run(checkout, maven, "tiny")
    assert not (checkout["cache"] / "tiny" / "tiny-1.0.jar").exists()


def test_a_pin_changed_without_relocking_fails_naming_jars_lock(
    checkout: dict[str, Path], maven: Maven
) -> None:
    run(checkout, maven, "tiny", relock=True)
    checkout["pins"].write_text(PINS.replace("tiny:1.0", "tiny:1.1"))
    with pytest.raises(JarsError, match="make jars-lock SETS=tiny"):
        run(checkout, maven, "tiny")
    with pytest.raises(JarsError, match="make jars-lock SETS=wide"):  # never locked
        run(checkout, maven, "wide")


def test_relocking_one_set_keeps_the_others(checkout: dict[str, Path], maven: Maven) -> None:
    run(checkout, maven, relock=True)  # every set
    before = jars.read_lock(checkout["lock"])
    maven.serve({"wide-2.0.jar": "new"})
    run(checkout, maven, "wide", relock=True)
    after = jars.read_lock(checkout["lock"])
    assert after["tiny"] == before["tiny"]
    assert after["wide"].jars == {"wide-2.0.jar": digest("new")}


def test_maven_is_asked_for_the_artifacts_with_their_dependencies_and_exclusions(
    checkout: dict[str, Path], maven: Maven
) -> None:
    run(checkout, maven, relock=True)
    tiny, wide = maven.calls
    assert "-DexcludeTransitive=true" in tiny and "-DexcludeTransitive=false" in wide
    assert "--strict-checksums" in tiny
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    pom = ET.fromstring(jar_resolver.pom(jars.read_pins(checkout["pins"]).sets["wide"]))
    (dependency,) = pom.findall("m:dependencies/m:dependency", ns)
    assert [
        dependency.findtext(f"m:{field}", namespaces=ns)
        for field in ("groupId", "artifactId", "version")
    ] == ["org.example", "wide", "2.0"]
    excluded = [
        (e.findtext("m:groupId", namespaces=ns), e.findtext("m:artifactId", namespaces=ns))
        for e in dependency.findall("m:exclusions/m:exclusion", ns)
    ]
    assert excluded == [("org.scala-lang", "scala-library"), ("com.fasterxml.jackson.core", "*")]


def test_no_maven_on_the_machine_says_how_to_get_it(
    checkout: dict[str, Path], tmp_path: Path
) -> None:
    with pytest.raises(JarsError, match="apt-get install maven"):
        resolve(["tiny"], relock=True, maven=str(tmp_path / "no-mvn"), **checkout)


def test_a_lookup_of_a_set_not_in_the_cache_says_to_run_make_jars(
    checkout: dict[str, Path], maven: Maven
) -> None:
    run(checkout, maven, "tiny", relock=True)
    (checkout["cache"] / "tiny" / "tiny-1.0.jar").unlink()
    with pytest.raises(MissingJarsError, match=r"run `make jars` \(or `make jars SETS=tiny`\)"):
        jars.jars("tiny", **cache_of(checkout))
    assert not jars.has_jars("tiny", **cache_of(checkout))


def test_a_set_of_another_spark_line_runs_in_that_line_s_virtualenv(
    checkout: dict[str, Path], tmp_path: Path
) -> None:
    ours = jars.spark_line(metadata.version("pyspark"))
    checkout["pins"].write_text(PINS.replace('spark = "4.1"', f'spark = "{ours}"', 1))
    assert jars.spark_python("tiny", pins=checkout["pins"], repo=tmp_path) == Path(sys.executable)
    if ours != "4.1":  # "wide" is of another line than this PySpark's
        with pytest.raises(MissingJarsError, match="run `make spark-venvs`"):
            jars.spark_python("wide", pins=checkout["pins"], repo=tmp_path)
        venv = jars.peer_venv("4.1", repo=tmp_path)
        venv.mkdir()
        (venv / ".installed").touch()
        assert (
            jars.spark_python("wide", pins=checkout["pins"], repo=tmp_path) == venv / "bin/python"
        )


def test_the_committed_lock_is_written_from_the_committed_pins() -> None:
    pins = jars.read_pins()
    locked = jars.read_lock()
    assert sorted(locked) == sorted(pins.sets)
    for name, jar_set in pins.sets.items():
        assert locked[name].spec == jar_set.spec, f"run `make jars-lock SETS={name}`"
        assert locked[name].jars, name
    ours = jars.spark_line(metadata.version("pyspark"))
    assert {s.spark for s in pins.sets.values()} <= {ours, *pins.pyspark}, "a line without PySpark"


def test_a_pin_that_is_not_a_maven_coordinate_is_refused(tmp_path: Path) -> None:
    pins = tmp_path / "pins.toml"
    pins.write_text(PINS.replace('"org.example:wide:2.0"', '"org.example:wide"'))
    with pytest.raises(ValueError, match=r"set 'wide': artifacts are group:artifact:version"):
        jars.read_pins(pins)
