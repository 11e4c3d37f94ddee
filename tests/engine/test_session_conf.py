"""The settings a session built by versioned starts with."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import functions as F

from versioned.engine.spark.session import session_conf

DEBUGGING = "spark.python.sql.dataFrameDebugging.enabled"


def test_a_session_versioned_builds_does_not_send_call_sites_per_column(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With PySpark's DataFrame debugging on, every Column function also looks up the active
    # session and sets and clears PySparkCurrentOrigin in the JVM: many py4j round trips per
    # expression, paid by every batch while its plan is built.
    assert spark.conf.get(DEBUGGING) == "false"
    client = spark.sparkContext._gateway._gateway_client
    sent: list[str] = []
    send = client.send_command

    def counting(command: str, *args: Any, **kwargs: Any) -> Any:
        if not command.startswith("m\nd\n"):  # py4j releasing objects Python let go of
            sent.append(command)
        return send(command, *args, **kwargs)

    monkeypatch.setattr(client, "send_command", counting)
    F.when(F.col("a").isNull(), F.lit(1)).otherwise(F.col("b") + F.lit(2))
    monkeypatch.undo()
    assert not [c for c in sent if "PySparkCurrentOrigin" in c], "call sites were sent"
    assert len(sent) <= 30, f"{len(sent)} py4j commands for one small expression"


def test_the_callers_own_setting_wins() -> None:
    assert session_conf()[DEBUGGING] == "false"
    assert session_conf({DEBUGGING: "true"})[DEBUGGING] == "true"
