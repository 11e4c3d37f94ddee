# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo jars jars-lock spark-venvs check test test-spark test-fresh test-oldest-spark test-s3 test-cluster test-cluster-s3 soak faults faults-s3 soak-long wheel-smoke lint docs bench bench-smoke bench-acid bench-acid-profile bench-streaming bench-mutation bench-caller bench-first-load bench-s3 bench-scheduled-job bench-scaling bench-continuous bench-peers bench-ui clean

# The package and its development tools; the benchmarks' peers (delta-rs, pyiceberg,
# matplotlib) only for the `bench*` targets (the tests need none of them: about 30 s of CI).
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

demo: $(STAMP)
	$(PY) -m versioned.demo

# The JVM libraries the tests and benchmarks put on Spark's classpath (Delta's and Iceberg's
# Spark runtimes, Hadoop's S3A with its AWS SDK, ...): the sets of jars/pins.toml resolved with
# Maven into .jars/<set>/ (git-ignored), each jar checked against jars/pins.lock; when they are
# all there and match, no Maven and no network (about a second). SETS="delta s3a" takes some.
# `make jars-lock` resolves anew and rewrites the lock: the way to change a pin. Tests and
# benchmarks read the cache only (benchmarks/harness/jars.py). Needs Maven and a JDK, not the
# virtualenv.
SETS ?=
JARS := $(PYTHON) -m benchmarks.harness.jar_resolver
jars:
	$(JARS) resolve $(SETS)

jars-lock:
	$(JARS) resolve --lock $(SETS)

# A set built for another Spark line than the virtualenv's PySpark (jars/pins.toml: Delta on
# 4.2, Iceberg on 4.1) runs in .venv-spark<line>: that line's PySpark (the release [spark]
# names) and versioned, nothing else. One per line the pins name; about 40 s each when pip's
# cache has PySpark.
spark-venvs:
	@for line in $$($(JARS) lines); do $(MAKE) --no-print-directory .venv-spark$$line/.installed || exit 1; done

.venv-spark%/.installed: pyproject.toml jars/pins.toml
	@test -x .venv-spark$*/bin/python || $(PYTHON) -m venv .venv-spark$*
	.venv-spark$*/bin/python -m pip install --quiet --upgrade pip
	.venv-spark$*/bin/python -m pip install --quiet "pyspark==$$($(JARS) pyspark $*)" -e .
	@touch $@

# The tiers (README, Development). `make check` before each commit: ruff, mypy and every test
# that needs no JVM (tests/conftest.py marks `spark` and `jvm` from the fixtures a test uses),
# with Spark made impossible to start, so a test that starts one unmarked fails here. Two
# pytest-xdist workers: 190 s instead of 245 s on 2 cores (the Spark tiers gain nothing from
# them: one session already keeps both cores busy).
NO_JVM := SPARK_HOME=/nonexistent/make-check-starts-no-jvm
check: $(STAMP)
	$(VENV)/bin/ruff check versioned tests benchmarks docs
	$(VENV)/bin/ruff format --check --quiet versioned tests benchmarks docs
	$(VENV)/bin/mypy
	$(NO_JVM) $(PY) -m pytest -m 'not spark and not jvm and not soak and not faults and not fresh' -n 2 -p no:cacheprovider --durations=15

# Everything `make check` runs and every test on the shared SparkSession, the few that start
# JVMs of their own, and PostgreSQL (CI's first stage). Two runs: the tests that need no JVM
# on two workers, as `make check` runs them (about 130 s instead of 265 s), then the rest in
# one process, all on its one SparkSession.
#
# CI runs the Spark part in two pieces, one in each of its lanes (.ci/run): SPARK_SKIP leaves
# folders out of `make test` (e.g. SPARK_SKIP="--ignore=tests/interop") and `make test-spark
# SPARK_TESTS="tests/interop"` runs them. Left empty, `make test` runs everything.
SPARK_SKIP ?=
SPARK_TESTS ?=
test: $(STAMP)
	$(VENV)/bin/ruff check versioned tests benchmarks docs
	$(VENV)/bin/ruff format --check --quiet versioned tests benchmarks docs
	$(VENV)/bin/mypy
	$(NO_JVM) $(PY) -m pytest -m 'not spark and not jvm and not soak and not faults and not fresh' -n 2 --durations=15
	$(PY) -m pytest -m '(spark or jvm) and not soak and not faults and not fresh' $(SPARK_SKIP)

test-spark: $(STAMP)
	$(PY) -m pytest -m '(spark or jvm) and not soak and not faults and not fresh' $(SPARK_TESTS)

# The Spark lines pyproject promises (`pyspark>=4.0,<5`): `make test` runs everything on the
# newest, and this runs the behaviour suite of every layout (tests/table) on the oldest 4.x
# release, in a virtualenv of its own (CI's `test-oldest-spark` stage;
# tests/unit/test_spark_promise.py keeps the pin and pyproject's lower bound in step).
# ONE_LAYOUT=1 (CI, here and for test-fresh) runs the layout the run's seed picks, without
# PostgreSQL: consecutive commits alternate the layouts (tests/support/one_layout.py); without
# it every layout runs.
OLDEST_PYSPARK := 4.0.5
# CLASS_ARCHIVE=off (CI): the test JVMs map no class archive, and none is made for them (a new
# virtualenv's first run: making it costs more than this tier's few JVM starts save).
ONE_LAYOUT ?= 0
CLASS_ARCHIVE ?= on
OLDEST_VENV := .venv-spark-oldest
# Besides tests/table: the code that builds on Spark's internal classes (`known_files`).
OLDEST_SPARK_ALSO := tests/engine/test_known_files.py
$(OLDEST_VENV)/.installed-$(OLDEST_PYSPARK): pyproject.toml
	@test -x $(OLDEST_VENV)/bin/python || $(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST_VENV)/bin/python -m pip install --quiet "pyspark==$(OLDEST_PYSPARK)" -e '.[dev]'
	@rm -f $(OLDEST_VENV)/.installed-*
	@touch $@

test-oldest-spark: $(OLDEST_VENV)/.installed-$(OLDEST_PYSPARK)
	$(OLDEST_VENV)/bin/python -c 'import pyspark; assert pyspark.__version__ == "$(OLDEST_PYSPARK)", pyspark.__version__'
	VERSIONED_TEST_ONE_LAYOUT=$(ONE_LAYOUT) VERSIONED_TEST_CLASS_ARCHIVE=$(CLASS_ARCHIVE) $(OLDEST_VENV)/bin/python -m pytest -p no:cacheprovider -m '(spark or jvm) and not soak and not faults and not fresh' tests/table $(OLDEST_SPARK_ALSO)

# The behaviour suite with every warehouse on a throw-away S3 server on loopback (moto's, with
# Hadoop's S3A connector from the jar cache: `make jars`), issue 46: tests/support/test_warehouse.py.
# S3_TESTS picks the files (default: all of tests/table); ONE_LAYOUT=1 runs the layout the run's
# seed picks. Tests that look at local files are skipped, saying why (marker `local_files`);
# the tests that start JVMs of their own run on local warehouses only.
S3_TESTS ?= tests/table
test-s3: $(STAMP)
	VERSIONED_TEST_WAREHOUSE=s3 VERSIONED_TEST_ONE_LAYOUT=$(ONE_LAYOUT) $(PY) -m pytest -p no:cacheprovider -m 'spark and not jvm and not slow and not soak and not faults and not fresh' $(S3_TESTS)

# Every command as a scheduled job runs it: the installed `versioned` script in a new process
# with nothing started (no SparkSession, no JVM, a scheduled job's environment), on each layout,
# each answer checked against what the earlier commands wrote (tests/fresh; a few minutes).
test-fresh: $(STAMP)
	VERSIONED_TEST_ONE_LAYOUT=$(ONE_LAYOUT) $(PY) -m pytest -p no:cacheprovider -m fresh tests/fresh

# The long runs `make test` leaves out: the multi-process writers-and-compactor and crash tests
# of every layout and catalog (one layout per catalog a run, by the run's seed), the killed bulk
# load and stream sink, and the randomized differential variants. Randomized choices come from
# the run's seed (pytest's header prints it; `VERSIONED_TEST_SEED=N make soak` replays a run).
soak: $(STAMP)
	VERSIONED_TEST_SHORT_LIVED_SESSION=1 $(PY) -m pytest -m soak

# The faults the catalog and the disk meet in production, each made real: a PostgreSQL cluster
# of the tests' own crashed, restarted and cut off mid-commit, a full file system (a small
# tmpfs the tests mount, as root), a client clock off by minutes, and the mixed-load history
# check (one seed a run; `make soak-long` runs many): tests/faults.
faults: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -m faults tests/faults

# The history check with the warehouse on the S3 tier's server behind a proxy that injects an
# object store's faults (503 SlowDown bursts, a cut upload part, a lost reply, slow GETs).
faults-s3: $(STAMP)
	VERSIONED_TEST_WAREHOUSE=s3 $(PY) -m pytest -p no:cacheprovider -m faults tests/faults/test_history_s3.py

# The history check of `make faults` with many seeds (SEEDS, default 20; one pytest run each,
# both layouts), then each run's line and the totals: operations, connection kills, commits,
# problems (`VERSIONED_TEST_SEED=N make faults` replays one).
SEEDS ?= 20
soak-long: $(STAMP)
	rm -f .history.jsonl
	for s in $$(seq 1 $(SEEDS)); do \
		VERSIONED_TEST_SEED=$$s VERSIONED_HISTORY_LOG=$(CURDIR)/.history.jsonl \
			$(PY) -m pytest -p no:cacheprovider -q -m faults tests/faults/test_history.py || exit 1; \
	done
	$(PY) -m tests.faults.totals .history.jsonl

# The tests marked `cluster` (their code runs on executors: bulk-load Bloom pieces, change-stream
# tasks, `vm.apply`, the sink, compaction and upserts of each layout; and the runner's own
# tests) on a real Spark standalone cluster (a Master and a Worker started from the
# pip-installed pyspark on 127.0.0.1, two executor JVMs), stopped whatever happens:
# tests/support/spark_cluster.py.
test-cluster: $(STAMP)
	$(PY) -m tests.support.spark_cluster --executors 2 -- $(PY) -m pytest -p no:cacheprovider -m cluster

# The same tests on a cluster whose driver and executors share nothing but an S3 server (moto's,
# the S3 tier's) and a PostgreSQL catalog: two Worker processes, each with a work folder of its
# own (issue 46; CI runs this one).
test-cluster-s3: $(STAMP)
	VERSIONED_TEST_WAREHOUSE=s3 VERSIONED_TEST_CATALOG=postgres $(PY) -m tests.support.spark_cluster --executors 2 --workers 2 -- $(PY) -m pytest -p no:cacheprovider -m cluster

# Build the wheel, install it with its dependencies into a fresh virtualenv outside the
# checkout, and run create / upsert / upsert / sql / show with its `versioned` script.
wheel-smoke:
	bash .ci/wheel-smoke.sh $(PYTHON)

lint: $(STAMP)
	$(VENV)/bin/ruff check versioned tests benchmarks docs
	$(VENV)/bin/mypy

# Redraw the pictures of docs/architecture.md (standard library only; a test checks that the
# committed SVGs are what the script draws). `--png` adds previews to look at (matplotlib).
docs:
	$(PYTHON) docs/architecture/draw.py

# Every benchmark scenario (`python -m benchmarks list`) end to end on tiny data, in one Spark
# session, against the same peers: a check that they still run, not a measurement (about 2 min
# on 2 cores). One line per scenario with its wall time; exits non-zero when one fails. Results
# and logs go to a temporary folder it names (benchmarks/README.md).
# HALF=seed (CI): the half of the scenarios the run's seed picks (consecutive commits alternate)
bench-smoke: $(BENCH_STAMP)
	$(PY) -m benchmarks run all --size smoke $(if $(HALF),--half $(HALF))

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks.upsert

# The acid layout next to versioned, delta-rs MERGE and the naive rewrite: upserts, reads after
# 1, 5 and 10 deltas, major compaction (writes benchmarks/results/acid.md; long-running).
bench-acid: $(BENCH_STAMP)
	$(PY) -m benchmarks.acid --rows 1000000 --rows 10000000

# Where a read of an acid table spends its time, step by step, after 10 deltas and after a
# major compaction (writes benchmarks/results/acid_read_profile.md).
bench-acid-profile: $(BENCH_STAMP)
	$(PY) -m benchmarks.acid_read_profile --rows 1000000 --rows 10000000

# Streaming ingest (versioned.streaming): records/s and commit latency per catalog and layout,
# one and four connections, delta-rs append alongside (writes benchmarks/results/streaming.md).
bench-streaming: $(BENCH_STAMP)
	$(PY) -m benchmarks.streaming --check

# The mutation API's Spark form (vm.apply) next to the acid upsert and delta-rs MERGE of the
# same 1 % and 10 % change sets (writes benchmarks/results/mutation.md; long-running).
bench-mutation: $(BENCH_STAMP)
	$(PY) -m benchmarks.mutation --rows 1000000 --rows 10000000

# versioned inside the caller's own Spark session (Spark's defaults) and its own, next to delta-rs
# MERGE: bulk load, upserts of DataFrame / Parquet / CSV input, reads, fixed cost (issue 15).
bench-caller: $(BENCH_STAMP)
	$(PY) -m benchmarks.caller_session --rows 1000000 --rows 10000000

# A table's first load (10M narrow rows, 3M wide rows) against a plain partitioned Spark write
# of the same DataFrame, each in a fresh process (issue 45 item 4; writes
# benchmarks/results/first_load.{json,md}; about 6 minutes).
bench-first-load: $(BENCH_STAMP)
	$(PY) -m benchmarks.first_load

# What each step of a table asks of an S3 server (moto's, on loopback), from its request log,
# beside a plain Spark table on the same S3A connector (issue 46's request budget; `make jars`).
bench-s3: $(BENCH_STAMP)
	$(PY) -m benchmarks.s3_requests

# The fixed cost of a scheduled job: a new process's `versioned upsert` of a 10-row CSV, per
# layout, against a new process that only starts the same SparkSession (issue 44; writes
# benchmarks/results/scheduled_job.{json,md}; about 3 minutes).
bench-scheduled-job: $(BENCH_STAMP)
	$(PY) -m benchmarks.scheduled_job --runs 5

# A fixed 100,000-row batch on tables of 3M, 10M and 30M rows, STRING and INT partitions, and
# each table's bulk load next to a plain partitioned write (issue 15; long-running).
bench-scaling: $(BENCH_STAMP)
	$(PY) -m benchmarks.scaling

# A table that keeps receiving change batches (30 of 1 % each, 10M rows): reads after every
# batch against plain scans, upserts (with the maintenance each table runs on its own) against
# delta-rs MERGE, both layouts (issue 30; writes benchmarks/results/continuous.md; long-running).
bench-continuous: $(BENCH_STAMP)
	$(PY) -m benchmarks.continuous --rows 10000000

# versioned next to its peers on the same Spark (issue 45): Delta MERGE (copy-on-write, deletion
# vectors) on PySpark 4.2 and Iceberg MERGE (copy-on-write, merge-on-read) on 4.1, each beside
# versioned in one session of a process of that line's virtualenv; versioned, delta-rs and the
# plain write on ours. Upsert at 10M rows (first batch of a fresh session, median of 3), 30
# batches of 1 % with reads after each, TPC-H SF 1 with Q1/Q6; the groups run one after
# another (writes benchmarks/results/peers.{json,md,png}; long-running: peers.md says how long).
bench-peers: $(BENCH_STAMP) jars spark-venvs
	$(PY) -m benchmarks.peers

# `versioned ui`'s page latency on a catalog of 100 tables x 1,000 commits (10 streamed for real,
# the rest copied in the catalog database; no Spark, about 3 minutes; writes
# benchmarks/results/ui_latency.{json,md}). Needs only the dev extra (the page's packages).
bench-ui: $(STAMP)
	$(PY) -m benchmarks.ui_latency

clean:
	rm -rf $(VENV) .venv-spark* .jars warehouse .pytest_cache .mypy_cache .ruff_cache
