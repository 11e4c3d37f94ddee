from __future__ import annotations

from pathlib import Path

import pytest

from versioned.config import resolve_settings
from versioned.errors import ConfigError


def test_defaults_put_sqlite_catalog_inside_local_warehouse(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = resolve_settings(env={})
    assert s.warehouse == str(tmp_path / "warehouse")
    assert s.catalog_url == f"sqlite:///{tmp_path}/warehouse/catalog.db"
    assert s.spark_master == "local[*]"
    assert s.user


def test_environment_overrides_defaults(tmp_path: Path):
    env = {
        "VERSIONED_CATALOG": "postgresql+psycopg://u@h/db",
        "VERSIONED_WAREHOUSE": str(tmp_path / "wh"),
        "VERSIONED_SPARK_MASTER": "local[3]",
        "VERSIONED_USER": "etl",
    }
    s = resolve_settings(env=env)
    assert (s.catalog_url, s.warehouse, s.spark_master, s.user) == (
        "postgresql+psycopg://u@h/db",
        str(tmp_path / "wh"),
        "local[3]",
        "etl",
    )


def test_arguments_override_environment(tmp_path: Path):
    env = {"VERSIONED_WAREHOUSE": "/nope", "VERSIONED_USER": "etl", "VERSIONED_SPARK_MASTER": "x"}
    s = resolve_settings(
        warehouse=str(tmp_path),
        user="alice",
        spark_master="local[1]",
        catalog="sqlite:///c.db",
        env=env,
    )
    assert (s.warehouse, s.user, s.spark_master, s.catalog_url) == (
        str(tmp_path),
        "alice",
        "local[1]",
        "sqlite:///c.db",
    )


def test_remote_warehouse_needs_explicit_catalog():
    with pytest.raises(ConfigError, match="--catalog"):
        resolve_settings(warehouse="s3://bucket/wh", env={})
    s = resolve_settings(warehouse="s3://bucket/wh/", catalog="sqlite:///x.db", env={})
    assert s.warehouse == "s3://bucket/wh" and not s.warehouse_is_local


def test_catalog_must_be_a_url():
    with pytest.raises(ConfigError, match="SQLAlchemy URL"):
        resolve_settings(catalog="catalog.db", env={})


def test_spark_is_quiet_unless_verbose_or_a_log_level_asks(tmp_path: Path):
    def level(env: dict[str, str], verbose: bool = False) -> str | None:
        return resolve_settings(warehouse=str(tmp_path), env=env, verbose=verbose).log_level

    assert level({}) is None
    assert level({}, verbose=True) == "WARN"
    assert level({"VERSIONED_LOG_LEVEL": "info"}) == "INFO"
    assert level({"VERSIONED_LOG_LEVEL": "debug"}, verbose=True) == "DEBUG"
    assert level({"VERSIONED_LOG_LEVEL": "Warning"}) == "WARN"
    assert level({"VERSIONED_LOG_LEVEL": "off"}) is None
    with pytest.raises(ConfigError, match="VERSIONED_LOG_LEVEL='loud' is not a log level"):
        level({"VERSIONED_LOG_LEVEL": "loud"})
