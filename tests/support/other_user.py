"""Python run as another OS user who is not root: what a user without write access sees.

The tests run as root, and permission bits stop nothing for root, so a catalog this user
cannot write needs a child process of somebody else: the ``postgres`` user, which the Debian
PostgreSQL packages create (`tests.support.postgres` runs the server as it). The child runs
through ``runuser`` with a clean environment (no ``VERSIONED_*`` variable of ours leaks in),
an interpreter of this Python version that user may run, this checkout first on its path,
then this environment's packages. `other_user` says why not when any of that is missing,
for the test to skip with.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

USER = "postgres"
CHECKOUT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class OtherUser:
    """How to run ``python`` as `USER`: ``command`` is the prefix, ending in the interpreter."""

    name: str
    command: tuple[str, ...]

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``python ARGS`` as this user (in ``/``) and wait for it."""
        return subprocess.run(
            [*self.command, *args], capture_output=True, text=True, timeout=timeout, cwd="/"
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        """Start ``python ARGS`` as this user, with pipes for its stdin and stdout."""
        return subprocess.Popen(
            [*self.command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd="/",
        )


@functools.cache
def other_user() -> OtherUser | str:
    """How to run Python as `USER`, or why it cannot be done here."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root, to run a child process as another user"
    if shutil.which("runuser") is None:
        return "needs runuser (util-linux) to run a child process as another user"
    try:
        import pwd

        pwd.getpwnam(USER)
    except KeyError:
        return f"needs the OS user {USER!r}"
    paths = [str(CHECKOUT), *site.getsitepackages()]
    env = [
        "env",
        "-i",
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "LANG=C.UTF-8",
        "HOME=/tmp",
        "PYTHONDONTWRITEBYTECODE=1",
        f"PYTHONPATH={os.pathsep.join(paths)}",
    ]
    if "SPARK_HOME" in os.environ:  # `make check` points it nowhere: no JVM may start
        env.append(f"SPARK_HOME={os.environ['SPARK_HOME']}")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    tried = []
    for python in _interpreters(version):
        command = ("runuser", "-u", USER, "--", *env, python)
        probe = subprocess.run(
            [*command, "-c", _PROBE, str(CHECKOUT / "versioned" / "__init__.py")],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return OtherUser(USER, command)
        tried.append(python)
    return (
        f"user {USER!r} can run no Python {version} that reads this checkout and its "
        f"packages (tried {', '.join(tried)})"
    )


# Prints the child's Python version when it would import this checkout and its packages.
_PROBE = """
import importlib.util, os, sys
ours = importlib.util.find_spec("versioned")
found = all(importlib.util.find_spec(m) for m in ("sqlalchemy", "click", "pyarrow"))
if ours and ours.origin == sys.argv[1] and found and os.access(sys.argv[1], os.R_OK):
    print("%d.%d" % sys.version_info[:2])
"""


def _interpreters(version: str) -> list[str]:
    """This interpreter, the one its virtual environment was made from, and the system's
    of the same version (a virtual environment under /root is out of other users' reach)."""
    found = [sys.executable, os.path.realpath(sys.executable), getattr(sys, "_base_executable", "")]
    for directory in ("/usr/bin", "/usr/local/bin"):
        found.append(os.path.join(directory, f"python{version}"))
    unique: list[str] = []
    for python in found:
        if python and os.path.isfile(python) and python not in unique:
            unique.append(python)
    return unique
