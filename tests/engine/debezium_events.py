"""Debezium change events as the connectors write them, for tests.

The shapes follow Debezium's documentation (debezium/debezium,
documentation/modules/ROOT/pages/connectors/postgresql.adoc, "create events": a value with a
``schema`` whose ``fields`` describe ``before``, ``after``, ``source``, ``op``, ``ts_ms``,
and a ``payload``; each column field has ``type``, ``optional``, ``field`` and, for semantic
types, ``name``, ``version`` and ``parameters``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any


def decimal_bytes(unscaled: int) -> str:
    """Kafka Connect Decimal: base64 of the unscaled value's big-endian two's complement
    (Java's ``BigInteger.toByteArray``, the fewest bytes that hold the sign)."""
    length = (unscaled.bit_length() + 8) // 8
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")


def field(name: str, type_: str, semantic: str | None = None, **parameters: str) -> dict[str, Any]:
    """One column of a ``before``/``after`` schema."""
    out: dict[str, Any] = {"type": type_, "optional": True, "field": name}
    if semantic is not None:
        out.update(name=semantic, version=1)
    if parameters:
        out["parameters"] = parameters
    return out


def envelope(
    op: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    columns: list[dict[str, Any]] | None = None,
    *,
    source: dict[str, Any] | None = None,
    ts_ms: int = 1559033904863,
) -> str:
    """One change event value as JSON text; with ``columns`` it has a schema
    (``schemas.enable=true``), without it is the bare payload."""
    payload = {"before": before, "after": after, "source": source or {}, "op": op, "ts_ms": ts_ms}
    if columns is None:
        return json.dumps(payload)
    row = {"type": "struct", "fields": columns, "optional": True, "name": "srv.public.t.Value"}
    schema = {
        "type": "struct",
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            {
                "type": "struct",
                "fields": [
                    {"type": "int64", "optional": True, "field": "lsn"},
                    {"type": "int64", "optional": False, "field": "ts_ms"},
                ],
                "optional": False,
                "name": "io.debezium.connector.postgresql.Source",
                "field": "source",
            },
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
        ],
        "optional": False,
        "name": "srv.public.t.Envelope",
    }
    return json.dumps({"schema": schema, "payload": payload})


def write_lines(path: Path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)
