"""``versioned ui``: the local, read-only web page over the catalog (`versioned.ui`)."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

import click

from versioned.catalog.connection import outage_setting
from versioned.cli.context import CliContext, pass_cli
from versioned.ui import CATALOG_WAIT_S, INSTALL_HINT, missing_requirements
from versioned.ui.server import DEFAULT_HOST, DEFAULT_PORT


@click.command("ui")
@click.option(
    "--host",
    default=DEFAULT_HOST,
    show_default=True,
    help="Address to listen on. Keep the loopback default unless you mean to show the "
    "page to other machines: it has no login of its own.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on (0: any free port; the URL printed says which).",
)
@pass_cli
def ui(state: CliContext, host: str, port: int) -> None:
    """Serve a read-only web page over the catalog until Ctrl-C.

    \b
    What it shows, from catalog metadata only (no Spark starts):
      /                every table you may read: layout, live rows, size, last commit
                       and its age, worst read amplification, health marks (needs
                       compaction, stream writer idle, dead letters rising)
      /table/DB.TABLE  commits over time (rows inserted / updated / deleted / rejected,
                       bytes, seconds), partitions as a heat map of read amplification
                       with the compaction the policy would run, schema history, stream
                       progress per writer, the latest dead letters with their reasons,
                       open transactions and locks

    The page only reads. Grants apply exactly as on the command line: it acts as --user
    (else VERSIONED_USER, else the OS user) and shows only the tables that principal may
    read; any other table's page answers 404, whether or not it exists. One line on stderr
    says the URL; Ctrl-C stops the server. While the catalog cannot be reached, pages
    answer 503 saying so and reload themselves until it is back (one line on stderr per
    request). Needs the ui extra: pip install 'versioned[ui]'.

    \b
    Example, on the warehouse `make demo` leaves:
      .venv/bin/versioned --warehouse demo-output/warehouse --user demo ui
      # versioned ui: http://127.0.0.1:8765/ (user demo, read-only; Ctrl-C stops it)
    """
    missing = missing_requirements()
    if missing:
        raise click.ClickException(f"versioned ui needs {', '.join(missing)}: {INSTALL_HINT}")
    from versioned.ui.app import create_app
    from versioned.ui.server import listen, server, url_of

    # A page waits for an unreachable catalog a moment, not a command's half minute (it
    # tries again by itself), and says so in one line (`create_app`), not in the catalog's
    # "trying again" notices.
    wait_s = min(outage_setting(), CATALOG_WAIT_S)
    state.settings = replace(state.settings, catalog_outage_s=wait_s)
    logging.getLogger("versioned.catalog").setLevel(logging.ERROR)
    catalog = state.catalog
    sock = listen(host, port)
    app = create_app(catalog)
    click.echo(
        f"versioned ui: {url_of(sock)} (user {catalog.user}, read-only; Ctrl-C stops it)",
        err=True,
    )
    # The overview's rows of every table, read while the user opens the page.
    threading.Thread(target=app.state.warm_up, name="ui-warm-up", daemon=True).start()
    server(app).run(sockets=[sock])


COMMANDS = [ui]
