#!/usr/bin/env bash
# The wheel as a new user gets it: build it from a copy of the checkout, install it with its
# dependencies into a fresh virtualenv outside the checkout (no system site packages), and
# drive that virtualenv's `versioned` script from an empty temporary directory:
# init / create-table / upsert / upsert (verbose, at log level INFO) / sql. Fails on any missing package data (the
# SQL templates), on a wrong result, on any line `sql` prints to stderr but the one that says
# Spark is starting, on an `upsert` line on stderr that is neither that one nor progress, and on
# any file Spark leaves in the working directory, and on an `upsert --verbose` at log level
# INFO that does not forward Spark's own lines to stderr. Three commands start Spark. (These are the suite's checks of what the
# real console script prints: tests/cli drives the commands in-process.)
#
# Usage: .ci/wheel-smoke.sh [PYTHON]   (PYTHON builds the wheel and the virtualenv; default
# python3). Extra pip options (e.g. --find-links DIR for a wheel cache) go in PIP_OPTIONS.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/versioned-wheel-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$SECONDS
step() { printf '[wheel-smoke %4ds] %s\n' "$((SECONDS - started))" "$*"; }
fail() { printf 'wheel-smoke FAILED: %s\n' "$*" >&2; exit 1; }

# Build from a copy of the files git knows (tracked and new, not ignored), so the checkout
# gets no build/ or *.egg-info and nothing outside the package can leak into the wheel.
step "copying the source"
mkdir "$work/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard) \
    | (cd "$repo" && xargs -0 tar -cf - --no-recursion --ignore-failed-read) \
    | tar -xf - -C "$work/src"
step "building the wheel"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/versioned-*.whl)
step "built $(basename "$wheel")"

step "installing it with its dependencies into a fresh virtualenv"
"$python" -m venv "$work/venv"
# shellcheck disable=SC2086  # PIP_OPTIONS is a list of options
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    ${PIP_OPTIONS:-} "$wheel"

run="$work/run"
mkdir -p "$run/cwd"
cd "$run/cwd"  # the commands' working directory: it must stay empty
# Nothing of the checkout or of the caller's configuration may reach the installed package.
unset PYTHONPATH SPARK_HOME PYSPARK_PYTHON VERSIONED_CATALOG VERSIONED_USER \
    VERSIONED_SPARK_MASTER VERSIONED_LOG_LEVEL
export VERSIONED_WAREHOUSE="$run/wh"
export VERSIONED_CLASS_ARCHIVE="$run/classes"  # init makes Spark's class archive here
versioned() { "$work/venv/bin/versioned" --spark-master 'local[1]' "$@"; }

where=$("$work/venv/bin/python" -c 'import versioned; print(versioned.__file__)')
[[ $where == "$work/venv/"* ]] || fail "versioned was imported from $where, not the virtualenv"

cat >../batch1.csv <<'EOF'
id,name,region,op
1,first,east,I
2,two,west,I
1,one,east,U
3,three,east,I
EOF
cat >../batch2.csv <<'EOF'
id,name,region,op
2,two again,west,U
3,,east,D
4,four,west,I
EOF

step "create-table, upsert, upsert"
versioned init >../init.out 2>../init.err || fail "versioned init exited $?: $(cat ../init.err)"
# init prepares the class archive (a probe of its own, once); every later command maps it.
archive=$(sed -n 's/^classes *//p' ../init.out)
[[ $archive == "$run/classes/"*.jsa && -s $archive ]] \
    || fail "versioned init made no class archive: $(cat ../init.out ../init.err)"
versioned create-table smoke.t --columns "id BIGINT, name STRING, region STRING" \
    --primary-key id --partition-by region --op-code-column op >/dev/null
versioned upsert smoke.t ../batch1.csv --output json >../upsert.json 2>../upsert.err \
    || fail "versioned upsert exited $?: $(cat ../upsert.err)"
# Its own lines only: "starting Spark (MASTER)…", then progress lines ("[  1.2s] reading …").
head -n 1 ../upsert.err | grep -q -x 'starting Spark (.*)…' \
    || fail "versioned upsert did not say first that Spark is starting: $(cat ../upsert.err)"
tail -n +2 ../upsert.err | grep -v -E '^\[ *[0-9]+\.[0-9]s\] [^ ]' >../upsert.other || true
[[ ! -s ../upsert.other ]] || fail "versioned upsert wrote other lines to stderr: $(cat ../upsert.other)"
[[ $(wc -l <../upsert.err) -gt 1 ]] || fail "versioned upsert showed no progress"
"$work/venv/bin/python" - ../upsert.json <<'EOF' || fail "versioned upsert reported $(cat ../upsert.json)"
import json, sys
result = json.load(open(sys.argv[1]))
# three keys inserted; key 1's insert superseded by its update in the same batch
assert (result["inserted"], result["stale"], result["superseded"]) == (3, 0, 1), result
EOF
# The second upsert runs with --verbose at log level INFO: Spark's own lines (its JVM's
# stderr) go to stderr when a log level asks, and stdout still carries only the answer.
VERSIONED_LOG_LEVEL=info versioned --verbose upsert smoke.t ../batch2.csv --output json \
    >../upsert2.json 2>../upsert2.err || fail "versioned upsert exited $?: $(cat ../upsert2.err)"
grep -q -E 'INFO SparkContext: Running Spark version [0-9]' ../upsert2.err \
    || fail "versioned --verbose at INFO did not show Spark's own lines: $(cat ../upsert2.err)"
grep -q 'WARNING: Using incubator modules' ../upsert2.err \
    || fail "versioned --verbose did not forward the JVM's own stderr: $(cat ../upsert2.err)"
"$work/venv/bin/python" - ../upsert2.json <<'EOF' || fail "versioned upsert reported $(cat ../upsert2.json)"
import json, sys
result = json.load(open(sys.argv[1]))  # stdout is the answer alone, also at INFO
assert (result["inserted"], result["updated"], result["deleted"]) == (1, 1, 1), result
EOF

step "sql"
versioned sql "SELECT id, name, region FROM smoke.t ORDER BY id" --output csv >../sql.csv \
    2>../sql.err || fail "versioned sql exited $?: $(cat ../sql.err)"
printf 'id,name,region\n1,one,east\n2,two again,west\n4,four,west\n' >../expected.csv
diff -u ../expected.csv ../sql.csv || fail "versioned sql returned other rows"
# The one line a command that starts Spark says (README: "starting Spark (MASTER)…"), nothing else.
grep -v -x 'starting Spark (.*)…' ../sql.err >../sql.other || true
[[ ! -s ../sql.other ]] || fail "versioned sql wrote to stderr: $(cat ../sql.err)"

left=$(ls -A)
[[ -z $left ]] || fail "files left in the working directory: $left"

step "passed"
