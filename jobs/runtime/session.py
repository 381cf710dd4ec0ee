"""The one place a SparkSession is built.

Under ``spark-submit`` or on a cluster the master and resources come from there; the
embedded default (``local[*]`` with settings for a small machine) is used only when
nothing else set a master. With a master that is not local, the project's code and a packed
environment of its dependencies are shipped to the executors (jobs.runtime.shipping). Delta's Spark extension is switched on when configured
(``delta_engine = "spark"``) or already present in the submitted configuration.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from jobs.runtime import class_archive, logs, shipping
from jobs.runtime.java import check_java
from schemas.config import SparkSettings

log = logging.getLogger(__name__)

DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
EMBEDDED_MASTER = "local[*]"
# Spark's generated code for the wide parses (commit events, mqadmin outputs) has methods
# over HotSpot's 8,000-byte limit for compiling one; such a method runs in the bytecode
# interpreter for the whole job (docs/experiments.md, "Huge generated methods compiled").
JIT_OPTIONS = "-XX:-DontCompileHugeMethods"
# A short process over little data: the quick tier only (SparkSettings.jit, "startup";
# docs/experiments.md, "A quick-start compiler for short intervals"). Without the tiers HotSpot
# reserves a fifth of the code cache it reserves with them, and a whole run's generated classes
# filled it: "Out of space in CodeCache for adapters" ends the SparkContext mid-run. So the quick
# tier keeps the tiered default (docs/experiments.md, "A full code cache ends the session").
STARTUP_JIT_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
# A batch job on a few cores wants throughput, not G1's short pauses: less CPU and a smaller
# heap in these stages (docs/experiments.md, "The parallel garbage collector").
GC_OPTIONS = "-XX:+UseParallelGC"
# A write partitioned by date keeps one file open per date a task meets, up to this many,
# instead of first sorting the task's rows by date (beyond it Spark sorts the rest)
# (docs/experiments.md, "Concurrent writers instead of planned writes").
CONCURRENT_WRITERS = 8
# Spark's unit of execution memory. Its default grows with the heap up to 64 MB, and a broadcast
# hash table takes a whole page however few rows it holds; the plans of a run's broadcasts live
# until the cleaner's next collection, and a long session's filled its heap with such pages
# (docs/experiments.md, "Broadcast tables in small pages").
PAGE_SIZE = "4m"
# Spark keeps the classes it generates for a plan's code in a cache of 100 by default. An hour's
# five stages generate about a thousand, so a session kept between intervals compiled them all
# again every hour; this many keeps those the next hour's plans share, beside a few hours' of the
# classes whose code holds an interval's bounds, which every interval compiles anew (about 200 an
# hour). At about 14 KB of source and bytecode each, a full cache holds some 30 MB of the heap. A
# run in its own process compiles each plan once and keeps Spark's default (docs/experiments.md,
# "Generated code kept between intervals").
CODEGEN_CACHE_ENTRIES = 2000
# Reads of more explicit paths than Spark's threshold (32) list them in a Spark job, a task
# per path. With a local master those tasks run on the driver's own cores after a job's
# scheduling, so the driver lists them itself, in milliseconds (docs/experiments.md,
# "Listing many paths on the driver").
LOCAL_LISTING_THRESHOLD = 100_000


def _scratch_dir() -> str:
    """Where the embedded session keeps its warehouse and Derby files."""
    return os.environ.get("TMPDIR", "/tmp")


def _base_conf(settings: SparkSettings) -> dict[str, str]:
    return {
        "spark.sql.session.timeZone": "UTC",
        "spark.buffer.pageSize": PAGE_SIZE,
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": settings.partition_bytes,
        # a cached result's partitions are coalesced too (the replay's state is cached);
        # Spark keeps a cached plan's shuffle partitions as they are by default
        "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
        # Cached frames (the replay's state, the ingest's parses) live for one stage, and
        # compressing them costs more than it saves: before choosing an encoding Spark puts
        # every value of its integer and text columns into a boxed hash map (dictionary
        # statistics; docs/experiments.md, "An uncompressed cache"). Uncompressed, a cache
        # that outgrows memory spills to local disk (MEMORY_AND_DISK).
        "spark.sql.inMemoryColumnarStorage.compressed": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # PySpark 4 records in the driver JVM the line of Python behind each of Column's methods
        # and F.col, for the query context of a runtime error: about ten more calls to the JVM
        # each, where F.col itself takes three, and a stage builds thousands of expressions
        # (docs/experiments.md, "Column expressions without their Python call sites"). A runtime
        # error keeps its message and stack trace, without the line of Python that built the
        # failing expression; "true" restores those lines.
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        # Delta stores timestamps as INT64 microseconds (Spark's default is INT96).
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.parquet.compression.codec": "zstd",
        # Spark's planned writes sort by the partition columns before any writer sees a row;
        # without them a task writes through up to CONCURRENT_WRITERS open files unsorted
        "spark.sql.optimizer.plannedWrite.enabled": "false",
        "spark.sql.maxConcurrentOutputFileWriters": str(CONCURRENT_WRITERS),
        "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
        "spark.sql.legacy.timeParserPolicy": "CORRECTED",
        "spark.ui.showConsoleProgress": "false",
    }


def _master_conf(settings: SparkSettings) -> dict[str, str]:
    """The master ``settings`` name, or the embedded one with ``driver_memory`` (a master given
    keeps Spark's own memory, or the one under ``conf``)."""
    if settings.master:
        return {"spark.master": settings.master}
    return {"spark.master": EMBEDDED_MASTER, "spark.driver.memory": settings.driver_memory}


def launched_conf(settings: SparkSettings) -> dict[str, str]:
    """The master and driver memory (when set) of a session :func:`build_session` starts, not under
    spark-submit: :func:`_master_conf`, with those keys under ``conf`` over it."""
    given = {
        key: settings.conf[key] for key in ("spark.master", "spark.driver.memory") if key in settings.conf
    }
    return {**_master_conf(settings), **given}


def _embedded_conf(settings: SparkSettings) -> dict[str, str]:
    """Settings for the embedded single-machine default."""
    return {
        **_master_conf(settings),
        "spark.ui.enabled": "false",
        "spark.sql.warehouse.dir": os.path.join(_scratch_dir(), "offsetlake-warehouse"),
    }


def quick_start(
    settings: SparkSettings, interval: timedelta | None, rows_taken: Callable[[], int | None] | None = None
) -> bool:
    """Whether a driver JVM started for a run over ``interval`` (None: open or unknown) should
    compile for a quick start rather than for throughput (SparkSettings.jit). ``rows_taken``
    tells, for a run that replays, how many rows its replay takes from the lake (None: unknown;
    jobs.stages.replay.rows_taken). It is asked only for a short interval under ``jit = "auto"``,
    and more than ``startup_jit_rows`` compile fully."""
    if settings.jit != "auto":
        return settings.jit == "startup"
    if interval is None or interval > settings.startup_jit_interval:
        return False
    rows = rows_taken() if rows_taken is not None else None
    quick = rows is None or rows <= settings.startup_jit_rows
    if rows is not None:  # the run's log says why its JVM compiles as it does
        log.info(
            "the replay takes %s rows of the lake (startup_jit_rows %s): the driver JVM compiles %s",
            f"{rows:,}", f"{settings.startup_jit_rows:,}", "for a quick start" if quick else "fully",
        )  # fmt: skip
    return quick


def driver_java_options(
    settings: SparkSettings, interval: timedelta | None, rows_taken: Callable[[], int | None] | None = None
) -> str:
    """The options of a local driver JVM started here, for a run over ``interval`` (see :func:`quick_start`)."""
    derby = "-Dderby.system.home=" + _scratch_dir()
    archive = class_archive.java_options(class_archive.archive_path())
    quick = quick_start(settings, interval, rows_taken)
    jit = f"{JIT_OPTIONS} {STARTUP_JIT_OPTIONS}" if quick else JIT_OPTIONS
    return f"{derby} {jit} {GC_OPTIONS} {archive}".rstrip()


def _ship_environment(settings: SparkSettings, conf: dict[str, str], submitted: SparkConf) -> None:
    """Have a cluster's executors run the packed environment (jobs.runtime.shipping): the one
    given as ``executor_environment``, one already in ``spark.archives`` as ``#environment``,
    else one built from the driver's packages."""
    if settings.executor_environment == shipping.NO_ENVIRONMENT:
        return
    archives = [a for a in conf.get("spark.archives", submitted.get("spark.archives", "")).split(",") if a]
    if not any(a.endswith("#" + shipping.ENVIRONMENT_NAME) for a in archives):
        given = settings.executor_environment
        archive = given or str(shipping.packed_environment(shipping.cache_dir()))
        conf["spark.archives"] = ",".join([*archives, f"{archive}#{shipping.ENVIRONMENT_NAME}"])
    # PySpark gives executors this interpreter with every Python function (not the conf)
    os.environ["PYSPARK_PYTHON"] = shipping.EXECUTOR_PYTHON


def build_session(
    settings: SparkSettings,
    output: Path | None = None,
    interval: timedelta | None = None,
    kept: bool = False,
    rows_taken: Callable[[], int | None] | None = None,
) -> SparkSession:
    """Create (or reuse) the SparkSession described by ``settings``; a JVM started here writes
    what it prints to ``output`` when given (jobs.runtime.logs), and compiles for the length of
    the run's ``interval`` and the rows its replay takes (:func:`quick_start`; counted only for a
    JVM it starts). A ``kept`` session, one that serves many intervals' plans
    (jobs.cli.shared_session), keeps the code Spark generates for them."""
    if os.environ.get("PYSPARK_GATEWAY_PORT") and SparkContext._gateway is None:
        # under spark-submit its JVM holds the submitted settings; without a connection to it
        # SparkConf() is empty and the embedded master would replace spark-submit's
        SparkContext._ensure_initialized()
    submitted = SparkConf()  # what spark-submit / spark-defaults.conf already set
    conf = _base_conf(settings)
    if settings.master:
        conf.update(_master_conf(settings))
    elif not submitted.contains("spark.master"):
        check_java()
        conf.update(_embedded_conf(settings))
    if conf.get("spark.master", submitted.get("spark.master", "")).startswith("local"):
        # Python workers on this machine run the driver's interpreter (its virtualenv);
        # PySpark reads this variable, not the conf, when it starts the context.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        conf["spark.sql.sources.parallelPartitionDiscovery.threshold"] = str(LOCAL_LISTING_THRESHOLD)
        if not submitted.contains("spark.master") and SparkContext._gateway is None:
            # the driver JVM, started here, is the executor (a JVM already running keeps its options)
            conf["spark.driver.extraJavaOptions"] = driver_java_options(settings, interval, rows_taken)
    if settings.delta_engine == "spark":
        conf["spark.sql.extensions"] = DELTA_EXTENSION
        conf["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG
    if kept:
        conf["spark.sql.codegen.cache.maxEntries"] = str(CODEGEN_CACHE_ENTRIES)
    conf.update(settings.conf)
    conf.setdefault("spark.app.name", settings.app_name)
    on_cluster = not conf.get("spark.master", submitted.get("spark.master", "local")).startswith("local")
    if on_cluster:
        _ship_environment(settings, conf, submitted)

    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    starts_jvm = SparkContext._gateway is None
    starts_context = SparkContext._active_spark_context is None
    with logs.process_output_to(output if starts_jvm else None):
        spark = builder.getOrCreate()
    if on_cluster and starts_context:
        # the context ships it to every executor and puts it on its Python workers' path
        # (spark.submit.pyFiles is shipped only by spark-submit's own launch)
        spark.sparkContext.addPyFile(str(shipping.code_zip(shipping.cache_dir())))
    spark.sparkContext.setLogLevel(os.environ.get("OFFSETLAKE_SPARK_LOG_LEVEL", "WARN"))
    return spark


def native_delta_available(spark: SparkSession) -> bool:
    """True when Delta's Spark extension is configured and its classes load."""
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    if DELTA_EXTENSION not in extensions:
        return False
    try:
        spark.sparkContext._jvm.java.lang.Class.forName(DELTA_EXTENSION)  # type: ignore[union-attr]
    except Exception:  # py4j raises a generic Py4JJavaError for ClassNotFoundException
        return False
    return True
