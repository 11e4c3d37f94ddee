"""Run CLI commands in this process through click's CliRunner and print their results as one
JSON list: the child side of tests that run the CLI as another user
(`tests.support.other_user`).

Usage: ``python -m tests.support.cli_batch '[["--catalog", "sqlite:///...", "list-tables"]]'``
"""

from __future__ import annotations

import json
import sys
from typing import Any

from click.testing import CliRunner

from versioned.cli.main import cli


def run_all(commands: list[list[str]]) -> list[dict[str, Any]]:
    """Each command's exit code, stdout, stderr and unexpected exception (``None`` when none)."""
    results = []
    for args in commands:
        result = CliRunner().invoke(cli, args)
        unexpected = result.exception is not None and not isinstance(result.exception, SystemExit)
        results.append(
            {
                "exit_code": result.exit_code,
                "stdout": result.stdout,
                "stderr": result.stderr,
                "exception": repr(result.exception) if unexpected else None,
            }
        )
    return results


if __name__ == "__main__":
    print(json.dumps(run_all(json.loads(sys.argv[1]))))
