"""Functions run in spawned worker processes (importable by the child)."""

from __future__ import annotations

import os
import pickle
from typing import Any


def apply(coordinator_bytes: bytes, mutations: list[tuple[str, list[str], dict[str, Any]]]) -> None:
    """Unpickle a coordinator, apply the mutations, close it."""
    coord = pickle.loads(coordinator_bytes)
    for op, partition, record in mutations:
        getattr(coord, op)(partition, record)
    coord.close()


def apply_and_die(
    coordinator_bytes: bytes, mutations: list[tuple[str, list[str], dict[str, Any]]]
) -> None:
    """Apply the mutations (groups finished before the last are written) and die unclosed."""
    coord = pickle.loads(coordinator_bytes)
    for op, partition, record in mutations:
        getattr(coord, op)(partition, record)
    os._exit(3)
