"""An S3 warehouse on a session whose classpath has no S3A connector (the shared test session
has none): one clear error at the catalog's first use of Spark, naming what to set, instead
of Java's ClassNotFoundException at the first Spark write (issue 46)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.s3_server import S3Server, serving_bucket
from tests.support.test_warehouse import S3_TIER
from versioned.api.catalog import connect
from versioned.errors import StorageError

pytestmark = pytest.mark.skipif(S3_TIER, reason="the S3 tier's session has the S3A connector")


@pytest.fixture
def s3(tmp_path: Path) -> Iterator[S3Server]:
    with serving_bucket(tmp_path / "s3", record=False) as server:
        yield server


def test_a_session_without_s3a_is_one_clear_error(spark: Any, s3: S3Server, tmp_path: Path) -> None:
    cat = connect(catalog=f"sqlite:///{tmp_path}/c.db", warehouse="s3://lake/wh", spark=spark)
    try:
        with pytest.raises(StorageError) as raised:
            _ = cat.spark
        message = str(raised.value)
        assert "\n" not in message
        assert "S3A connector" in message and "VERSIONED_SPARK_JARS" in message
    finally:
        cat.close()
