"""The class-data archive's settings (`versioned.engine.spark.class_archive`): where it is, when
a session maps it, and how it is turned off. No JVM: making a real archive is `make
wheel-smoke`'s check (its `versioned init`, then every command of the smoke maps it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from versioned.engine.spark import class_archive
from versioned.engine.spark.class_archive import (
    ENV_CLASS_ARCHIVE,
    archive_dir,
    archive_path,
    java_options,
    make_archive,
)
from versioned.engine.spark.session import session_conf

JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def test_the_archive_lives_in_the_users_cache_unless_a_folder_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV_CLASS_ARCHIVE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert archive_dir() == tmp_path / "cache" / "versioned" / "class-archive"
    monkeypatch.setenv(ENV_CLASS_ARCHIVE, str(tmp_path / "mine"))
    assert archive_dir() == tmp_path / "mine"
    path = archive_path()
    assert path is not None and path.parent == tmp_path / "mine"
    assert path.name.startswith("spark-") and path.suffix == ".jsa"


def test_a_session_maps_the_archive_only_once_it_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_CLASS_ARCHIVE, str(tmp_path))
    assert java_options() == ""
    assert "SharedArchiveFile" not in session_conf()[JAVA_OPTIONS]
    path = archive_path()
    assert path is not None
    path.write_bytes(b"made")
    assert java_options().startswith(f"-XX:SharedArchiveFile={path} -Xshare:auto")
    assert f"-XX:SharedArchiveFile={path}" in session_conf()[JAVA_OPTIONS]
    assert "SharedArchiveFile" not in session_conf(archive=False)[JAVA_OPTIONS]
    # A caller's own JVM options come after ours (theirs win where both set one).
    mine = session_conf({JAVA_OPTIONS: "-Xss4m"})[JAVA_OPTIONS]
    assert mine.index("SharedArchiveFile") < mine.index("-Xss4m")


@pytest.mark.parametrize("off", ["off", "0", "false", "no", "OFF"])
def test_off_neither_maps_nor_makes_an_archive(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, off: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(ENV_CLASS_ARCHIVE, raising=False)
    path = archive_path()
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"made")
    monkeypatch.setenv(ENV_CLASS_ARCHIVE, off)
    assert java_options() == ""

    def no_probe(*args: object, **kwargs: object) -> None:
        raise AssertionError("no probe may run when the archive is off")

    monkeypatch.setattr(class_archive.subprocess, "run", no_probe)
    assert make_archive() is None


def test_an_archive_already_made_is_not_made_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_CLASS_ARCHIVE, str(tmp_path))
    path = archive_path()
    assert path is not None
    path.write_bytes(b"made")

    def no_probe(*args: object, **kwargs: object) -> None:
        raise AssertionError("the archive exists: no probe may run")

    monkeypatch.setattr(class_archive.subprocess, "run", no_probe)
    assert make_archive() == path


def test_a_failed_probe_leaves_no_archive_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_CLASS_ARCHIVE, str(tmp_path))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java-here"))
    assert archive_path() is None and make_archive() is None  # no Java: nothing to map
    monkeypatch.delenv("JAVA_HOME")
    said: list[str] = []

    def failing_probe(argv: list[str], **kwargs: object) -> object:
        Path(argv[-1]).write_bytes(b"half an archive")  # the JVM died while writing it
        return type(
            "Done", (), {"returncode": 1, "stderr": "java.lang.OutOfMemoryError", "stdout": ""}
        )()

    monkeypatch.setattr(class_archive.subprocess, "run", failing_probe)
    assert make_archive(said.append) is None
    assert list(tmp_path.iterdir()) == []
    assert "OutOfMemoryError" in said[-1]
