"""List a catalog's tables, pausing inside the first read: the child side of the test that a
writer starting during an unlocked read of a read-only catalog makes the read run again.

Usage: ``python -m tests.support.paused_reader URL USER``. Prints ``paused`` when its first
read transaction is about to commit and waits for a line on stdin; then prints, as JSON, the
tables it listed and how many read transactions it committed.
"""

from __future__ import annotations

import json
import sys

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from versioned.catalog import MetaStore


def main(url: str, user: str) -> None:
    """Open the catalog, list its tables with the pause, print what came out."""
    store = MetaStore.connect(url, user, create=False)
    commits: list[int] = []

    # Listeners on the Engine class run before those of an engine (the catalog's check).
    @event.listens_for(Engine, "commit")
    def pause(_conn: Connection) -> None:
        commits.append(1)
        if len(commits) == 1:
            print("paused", flush=True)
            sys.stdin.readline()

    names = [str(t.spec.name) for t in store.tables()]
    store.close()
    print(json.dumps({"tables": names, "commits": len(commits)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
