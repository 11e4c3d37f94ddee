"""Commands that grant and revoke privileges."""

from __future__ import annotations

import click

from versioned.api.catalog import PRIVILEGES
from versioned.cli.context import CliContext, output_option, pass_cli
from versioned.cli.render import echo, render_rows
from versioned.errors import NotFoundError


@click.command("grant")
@click.argument("privilege", type=click.Choice(PRIVILEGES))
@click.argument("target", metavar="DB|DB.TABLE")
@click.argument("principal")
@pass_cli
def grant(state: CliContext, privilege: str, target: str, principal: str) -> None:
    """Grant PRIVILEGE (read, write or all) on a database or table to PRINCIPAL.

    A grant on a database applies to all its tables; write implies read. Only the owner
    may grant.

    \b
    Example:  versioned grant read test.sell analyst
    """
    state.catalog.grant(principal, privilege, target)  # type: ignore[arg-type]
    echo(f"granted {privilege} on {target} to {principal}")


@click.command("revoke")
@click.argument("privilege", type=click.Choice(PRIVILEGES))
@click.argument("target", metavar="DB|DB.TABLE")
@click.argument("principal")
@pass_cli
def revoke(state: CliContext, privilege: str, target: str, principal: str) -> None:
    """Revoke PRIVILEGE on a database or table from PRINCIPAL.

    Exits 3 (not found), changing nothing, when PRINCIPAL holds no such grant: a grant on
    a database is revoked on the database, not on its tables, and `all` or `write` is not
    revoked by revoking `read`. `versioned grants` lists what is granted.
    """
    if not state.catalog.revoke(principal, privilege, target):  # type: ignore[arg-type]
        raise NotFoundError(
            f"{principal} holds no {privilege} grant on {target}: nothing was revoked "
            f"(`versioned grants {target}` lists the grants)",
            principal=principal,
            privilege=privilege,
            target=target,
        )
    echo(f"revoked {privilege} on {target} from {principal}")


@click.command("grants")
@click.argument("target", metavar="DB|DB.TABLE")
@output_option
@pass_cli
def grants(state: CliContext, target: str) -> None:
    """List the grants on a database or table."""
    rows = [
        {
            "principal": g.principal,
            "privilege": g.privilege,
            "on": g.database if g.table is None else f"{g.database}.{g.table}",
            "granted_by": g.granted_by,
        }
        for g in state.catalog.grants(target)
    ]
    echo(render_rows(rows, state.output, ["principal", "privilege", "on", "granted_by"]))


COMMANDS = [grant, revoke, grants]
