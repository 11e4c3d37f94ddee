"""Random keys of every supported type, shared by the key and Bloom-filter tests."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any


def random_value(rng: random.Random) -> Any:
    """One key value of a random supported type (None included)."""
    kind = rng.randrange(10)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-(2**63), 2**63 - 1)
    if kind == 3:
        return rng.choice([0.0, -0.0, float("nan"), float("inf"), rng.uniform(-1e9, 1e9)])
    if kind == 4:
        return Decimal(rng.randint(-(10**12), 10**12)).scaleb(-rng.randint(0, 6))
    if kind == 5:
        alphabet = "ab ,:\\n\x00é✓𝄞"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
    if kind == 6:
        return rng.randbytes(rng.randint(0, 5))
    if kind == 7:
        return dt.date.fromordinal(rng.randint(1, 3_000_000))
    if kind == 8:
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(
            microseconds=rng.randint(-6 * 10**16, 10**17)
        )
        if rng.random() < 0.5:
            return moment
        zone = dt.timezone(dt.timedelta(minutes=rng.randint(-900, 900)))
        return moment.replace(tzinfo=dt.UTC).astimezone(zone)
    return str(rng.randint(0, 10**6))


def random_key(rng: random.Random) -> tuple[Any, ...]:
    """A key of one to three random values."""
    return tuple(random_value(rng) for _ in range(rng.randint(1, 3)))
