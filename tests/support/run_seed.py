"""The seed of a test run: randomized tests (the soak's crash, concurrency and differential
runs) draw their choices from it instead of running every seed every time.

It comes from ``$VERSIONED_TEST_SEED`` when set (to replay a run), else from the checked-out
commit, so CI's runs of one commit agree and each new commit explores new cases. pytest prints
it in its header; every randomized test names its own seed in its failure messages.

    VERSIONED_TEST_SEED=123456 make soak     # replay the run that printed "run seed 123456"
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path

ENV_SEED = "VERSIONED_TEST_SEED"
ROOT = Path(__file__).resolve().parents[2]


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


@cache
def run_seed() -> tuple[int, str]:
    """The run's seed and where it came from (read once per process, before any test can
    change the environment)."""
    return resolve(os.environ)


def resolve(env: Mapping[str, str]) -> tuple[int, str]:
    """The seed ``env`` names, else the commit's, and where it came from."""
    given = env.get(ENV_SEED)
    if given:
        return int(given), f"${ENV_SEED}"
    commit = _commit()
    if commit is None:  # not a git checkout (an unpacked sdist): a fixed seed, said so
        return 0, "no git commit found"
    return int(commit[:8], 16), f"commit {commit[:12]}"


def seed_for(name: str) -> int:
    """A seed of one test case: the run's seed mixed with ``name`` (its node id), so the cases
    of one run differ from each other and every run of a commit repeats them."""
    digest = hashlib.sha256(f"{run_seed()[0]}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def header() -> str:
    """The line pytest prints in its header."""
    seed, source = run_seed()
    return f"run seed {seed} ({source}); replay with {ENV_SEED}={seed}"
