"""The console script's entry point, which handles Ctrl-C and SIGTERM from the start.

Python needs about a second to import the command line (SQLAlchemy, pyarrow, click, the
API) before `versioned.cli.main.main` installs its handlers; a signal then raised a
KeyboardInterrupt with its traceback. This module imports nothing of that (``versioned``
imports its face lazily) and ends the process, while those imports run, with the line and
exit code of an interrupted command that changed nothing.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

NOTHING = "interrupted: nothing was committed"


def main() -> None:
    """Console-script entry point (`versioned.cli.main.main` once imported)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupted_while_starting)
    from versioned.cli.main import main as run

    run(sys.argv[1:])


def _interrupted_while_starting(signum: int, frame: Any) -> None:
    os.write(2, f"{NOTHING}\n".encode())
    os._exit(128 + signum)
