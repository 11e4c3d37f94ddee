"""The change stream's options (no Spark)."""

from __future__ import annotations

import pytest

from versioned.change_stream.options import LATEST, stream_options
from versioned.errors import InputError


def test_options_win_over_registered_defaults_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("VERSIONED_USER", "env-user")
    monkeypatch.setenv("VERSIONED_WAREHOUSE", f"{tmp_path}/env")
    defaults = {"user": "baked", "catalog": "sqlite:////baked/catalog.db"}
    resolved = stream_options({"table": "db.t", "User": "given"}, defaults)
    assert str(resolved.table) == "db.t"
    assert resolved.settings.user == "given"
    assert resolved.settings.catalog_url == "sqlite:////baked/catalog.db"
    assert resolved.settings.warehouse == f"{tmp_path}/env"
    assert stream_options({"table": "db.t"}).settings.user == "env-user"


@pytest.mark.parametrize(
    ("given", "expected"),
    [(None, None), ("earliest", None), ("latest", LATEST), ("LATEST", LATEST), ("12", 12)],
)
def test_starting_version(given: str | None, expected: object) -> None:
    options = {"table": "db.t"} | ({} if given is None else {"startingVersion": given})
    assert stream_options(options).starting_version == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "needs the table"),
        ({"table": "db.t", "startingversion": "-1"}, "is not a version"),
        ({"table": "db.t", "maxCommitsPerTrigger": "0"}, "must be a positive number"),
        ({"table": "a.b.c"}, "invalid table name"),
    ],
)
def test_bad_options_say_what_is_wrong(options: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        stream_options(options)
