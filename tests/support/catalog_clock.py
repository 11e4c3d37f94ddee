"""Move a table's creation time back in its catalog, as if it had been created ``hours`` ago.

Vacuum never deletes a file older than its table (`versioned.layouts.vacuum`). A test that ages
orphan files past the grace period ages their table first, so that the files are younger than
the table, as a crashed write's files are.
"""

from __future__ import annotations

import sqlalchemy as sa

from versioned.api.table import Table


def backdate_table(table: Table, hours: float) -> None:
    """Set ``table``'s ``created_at`` ``hours`` earlier (one UPDATE in the real catalog)."""
    engine = sa.create_engine(table.catalog.settings.catalog_url)
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text("UPDATE tables SET created_at = created_at - :s WHERE id = :id"),
                {"s": hours * 3600, "id": table.info.id},
            )
    finally:
        engine.dispose()
