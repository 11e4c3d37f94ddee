"""``python -m benchmarks``: list the scenarios, run one, several or all of them."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from benchmarks.harness.record import git_commit
from benchmarks.harness.runner import Plan, run
from benchmarks.scenarios import HELPERS, SCENARIOS, SIZES, Scenario, by_name, halves

DESCRIPTION = """\
Benchmarks of versioned against its peers (delta-rs, pyiceberg, plain Spark).

  python -m benchmarks list                      every scenario, what it measures, its sizes
  python -m benchmarks run upsert                one scenario on tiny data (--size smoke)
  python -m benchmarks run all                   every scenario on tiny data, in one process
  python -m benchmarks run acid --size 1M        the acid benchmark on a 1M-row table
  python -m benchmarks run upsert --size 10M -- --repeat 5    arguments for the scenario

Sizes: smoke runs each scenario end to end on a few thousand rows (every step once, no
warm-up): a check that the code still runs, against the same peers; its figures mean
nothing. 1M and 10M are the table sizes the committed results were measured at (`list`
says what each size means for each scenario).

Results: smoke writes to a new temporary folder; 1M and 10M write where each benchmark
always has, benchmarks/results/ (the committed results: review the diff before committing),
unless --out says otherwise. Each run also leaves every scenario's output (NAME.log) and a
record of the run (run.json: stamped with the commit, date and machine; run.md) in a
folder it names at the end.

Exit status: 0 when every scenario passed, 1 when one failed, 2 for a usage error.
"""


def _sizes(scenario: Scenario) -> str:
    """What ``1M`` and ``10M`` run, as the scenario's arguments."""
    parts = []
    for size in SIZES[1:]:
        if scenario.has(size):
            argv = " ".join(scenario.argv(size)) or "(defaults)"
            parts.append(f"{size}: {argv}")
    return "; ".join(parts) or "smoke only"


def list_scenarios() -> str:
    """The text of ``python -m benchmarks list``."""
    width = max(len(s.name) for s in SCENARIOS)
    lines = ["Scenarios (python -m benchmarks run NAME --size smoke|1M|10M):", ""]
    for s in SCENARIOS:
        tags = [f"make {s.make}" if s.make else "", "" if s.spark else "no Spark"]
        tags.append(f"writes {s.writes}" if s.writes else "prints its figures")
        lines.append(f"  {s.name:<{width}}  {s.summary}")
        lines.append(f"  {'':<{width}}  {'; '.join(t for t in tags if t)}")
        lines.append(f"  {'':<{width}}  {_sizes(s)}")
    lines += ["", "Not scenarios (modules the scenarios use):", ""]
    width = max(len(name) for name in HELPERS)
    lines += [f"  {name:<{width}}  {what}" for name, what in HELPERS.items()]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{list,run}")
    commands.add_parser("list", help="every scenario with what it measures, and the other modules")
    run_cmd = commands.add_parser(
        "run",
        help="run scenarios (see above)",
        description="Run scenarios one after the other in this process; one line each.",
        epilog="Arguments after `--` go to the scenario's own command line (one scenario).",
    )
    run_cmd.add_argument("scenarios", nargs="+", metavar="SCENARIO", help="names, or `all`")
    run_cmd.add_argument(
        "--size",
        choices=SIZES,
        default="smoke",
        help="smoke (default): tiny data; 1M / 10M: tables of that many rows",
    )
    run_cmd.add_argument(
        "--out",
        type=Path,
        help="results folder (smoke: a new temporary one; 1M / 10M: benchmarks/results)",
    )
    run_cmd.add_argument(
        "--half",
        choices=("0", "1", "seed"),
        help="with `all`: one of two halves of about equal smoke time; `seed`: the half the "
        "run's seed picks ($VERSIONED_TEST_SEED, else the commit's: consecutive commits "
        "alternate), as CI's bench-smoke does",
    )
    run_cmd.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show each scenario's own output (always shown when one scenario runs)",
    )
    return parser


class UsageError(Exception):
    """A command line that names no runnable scenario (exit status 2, as argparse's)."""


def _plan(args: argparse.Namespace, extra: list[str]) -> Plan:
    known = by_name()
    names = list(known) if args.scenarios == ["all"] else args.scenarios
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown scenario {', '.join(unknown)}: see python -m benchmarks list")
    if extra and len(names) != 1:
        raise UsageError("arguments after -- go to one scenario; name exactly one")
    scenarios = [known[n] for n in names]
    if args.half is not None:
        if args.scenarios != ["all"]:
            raise UsageError("--half splits `all`; name no scenario with it")
        half = _half(args.half)
        scenarios = halves(scenarios)[half]
        print(f"half {half} of the scenarios ({args.half}): {len(scenarios)}", file=sys.stderr)
    if len(scenarios) == 1 and not scenarios[0].has(args.size):
        raise UsageError(f"{names[0]} has no {args.size} size: {_sizes(scenarios[0])}")
    if args.size == "smoke":
        out = args.out or Path(tempfile.mkdtemp(prefix="versioned-bench-smoke-"))
        logs, work = out / "logs", out / "work"
    else:  # the benchmarks' own defaults: benchmarks/results, their scratch folders
        out, work = args.out, None
        logs = Path(tempfile.mkdtemp(prefix="versioned-bench-run-"))
    return Plan(
        scenarios,
        args.size,
        out,
        logs,
        work,
        tuple(extra),
        verbose=args.verbose or len(scenarios) == 1,
    )


def _half(given: str) -> int:
    """0 or 1: ``given``, or the parity of the run's seed (the tests' rule,
    tests/support/run_seed.py: $VERSIONED_TEST_SEED, else the commit's first 8 hex digits)."""
    if given != "seed":
        return int(given)
    seed = os.environ.get("VERSIONED_TEST_SEED")
    if seed:
        return int(seed) % 2
    commit = git_commit()["commit"]
    return int(commit[:8], 16) % 2 if commit != "unknown" else 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        print(list_scenarios())
        return 0
    try:
        plan = _plan(args, extra)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"python -m benchmarks: error: {exc}", file=sys.stderr)
        return 2
    outcomes = run(plan)
    return 1 if any(o.status == "FAILED" for o in outcomes) else 0


if __name__ == "__main__":  # not on import: spawned worker processes import this module
    sys.exit(main())
