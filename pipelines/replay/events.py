"""The replay's events: commits and snapshots in one shape, their integer ids, their order.

Every event belongs to a queue (QUEUE_KEY) and is ordered within it by ``REPLAY_ORDER``
(pipelines.replay.kernel): :func:`with_replayed_state` has Spark shuffle the events by queue
and hands each partition to the kernel, which sorts it that way and adds both semantics' state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import StructField, StructType

from pipelines.keys import client_state_group
from pipelines.replay import expressions
from pipelines.replay.kernel import (
    FILE_ID,
    PATH_ID,
    QUEUE_ID,
    SEED_RANK,
    SEED_STATE,
    STATE_COLUMNS,
    STATE_TYPES,
    replay_batches,
)
from pipelines.replay.projections import OBSERVATION_PATH, OBSERVATION_SEQ_SEPARATOR
from schemas.keys import CLIENT_STATE_KIND
from schemas.tables import QUEUE_KEY
from schemas.tables.spec import LINE_KEY

# The replay's rows carry the queue key and the landed file as integers (see EventIds):
# QUEUE_ID numbers the queue, FILE_ID the (source_file, _file_hash) pair in their sort order,
# PATH_ID the path alone (the lowest FILE_ID of its versions). Paths are ordered as the text
# ``OBSERVATION_PATH + OBSERVATION_SEQ_SEPARATOR``, the way observation_seq
# (pipelines.replay.projections) compares them: ``a.jsonl`` after ``a.jsonl.gz``, as ``a.jsonl|``
# sorts after ``a.jsonl.``, so the last observation of an instant is the same to the replay and
# to every reader of observation_seq.
# An event's position in its queue's replay order, counted from 1 (the seed row, if any, is 1):
# later events have larger numbers, so "the last event" is a max, which Spark aggregates by hash.
EVENT_SEQ = "event_seq"
FILE_KEY = ("source_file", "_file_hash")
REREAD_KEY = LINE_KEY  # a line of a landed copy, whatever its path (see without_reread_lines)
_PATH_TEXT = "_path_text"
SNAPSHOT_RANK, COMMIT_RANK = 0, 1
# A broker or client log line that repeats a commit of the canonical commit log (same
# queue and offset, the log's second-precision time within one second before) is the same
# commit seen twice; it is kept in bronze as corroboration and replayed once.
CORROBORATION_WINDOW_SECONDS = 1
REPLAYED_SNAPSHOT_SOURCES = ("main", "bak", "lmq", "lmq_bak")
CLIENT_STATE_SOURCE = "client_offsets"  # a broadcasting client's offsets.json (the ingest chose main or .bak)


def replayed_snapshots(
    snapshots: DataFrame, snapshot_files: DataFrame, client_files: DataFrame | None = None
) -> DataFrame:
    """The bronze snapshot rows to replay: those of the files the ingest's .bak rule marks as
    replayed (bronze/snapshot_files ``is_replayed``: every main file, and a ``.bak`` only where
    no healthy main file of its snapshot landed; a ``.bak`` beside its main file is one persist
    older and would read as a false decrease), and broadcasting clients' own offsets.

    A client's offsets are its state, not the broker's: each client instance's are replayed
    as a group of its own (schemas.keys.client_state_group), ``key_kind`` ``broadcast_client``.
    ``client_files`` (``source_file``, ``_file_hash``), when given, are the client files to
    replay: a client's offsets are its state at one instant, so of a path that landed again
    with other content only the version landed last counts (the caller knows the order)."""
    replayed = snapshot_files.where(F.col("is_replayed")).select("source_file", "_file_hash")
    broker_files = snapshots.where(F.col("snapshot_source").isin(*REPLAYED_SNAPSHOT_SOURCES)).join(
        F.broadcast(replayed), on=["source_file", "_file_hash"], how="left_semi"
    )
    clients = snapshots.where(F.col("snapshot_source") == CLIENT_STATE_SOURCE)
    if client_files is not None:
        clients = clients.join(F.broadcast(client_files), on=["source_file", "_file_hash"], how="left_semi")
    clients = clients.withColumns(
        {
            "consumer_group": client_state_group(F.col("consumer_group"), F.col("client_id")),
            "key_kind": F.lit(CLIENT_STATE_KIND),
        }
    )
    return broker_files.unionByName(clients)


def without_reread_lines(rows: DataFrame, reread: DataFrame | None) -> DataFrame:
    """``rows`` (bronze rows of landed lines) without the rows a longer copy of their file read again.

    A collector copying a file still being written can stop inside a line, and the cut line can
    still parse: a client log's ``queueId=3] 14`` of ``1470`` lands as a commit of offset 14. The
    longer copy reads that line again whole (jobs.io.growth), and its row is the evidence; the
    cut one stays in bronze, as the earlier copy said it, and is not replayed. ``reread``
    (REREAD_KEY: the earlier copy's cluster and content hash and the line's number; a rotated
    log's copy has another path) holds a row per such file, few enough to send to every
    executor; None: there are none.
    """
    if reread is None:
        return rows
    return rows.join(F.broadcast(reread.select(*REREAD_KEY)), on=list(REREAD_KEY), how="left_anti")


def without_corroborating_logs(commits: DataFrame, broadcast_logged: bool = False) -> DataFrame:
    """Drop log-told commits that repeat a commit of the canonical commit log.

    By default the two sides meet in an anti-join of Spark's choosing: on large inputs a
    sort-merge join that shuffles and sorts every canonical commit. With ``broadcast_logged``
    (for when the log-told commits are few enough to send to every executor) the canonical
    commits stream past the broadcast log-told ones instead, never shuffled: the log-told
    commits some canonical commit repeats are found that way, and only the others are kept.
    """
    logged = commits.where(F.col("evidence") != "commit_log")
    canonical = commits.where(F.col("evidence") == "commit_log")
    matches = [F.col(f"l.{k}") == F.col(f"c.{k}") for k in (*QUEUE_KEY, "offset")]
    within = (F.col("c.committed_at") >= F.col("l.committed_at")) & (
        F.col("c.committed_at")
        < F.col("l.committed_at") + F.expr(f"INTERVAL {CORROBORATION_WINDOW_SECONDS} SECONDS")
    )
    if not broadcast_logged:
        uncorroborated = logged.alias("l").join(canonical.alias("c"), on=[*matches, within], how="left_anti")
    else:
        # a log-told commit is one line of its file: the line and what it told identify it
        identity = [*QUEUE_KEY, "offset", "committed_at", "source_file", "line_no"]
        told = F.broadcast(logged.select(*identity)).alias("l")
        repeated = (
            canonical.alias("c")
            .join(told, on=[*matches, within])
            .select(*[F.col(f"l.{k}").alias(k) for k in identity])
        )
        same_line = [F.col(f"l.{k}").eqNullSafe(F.col(f"r.{k}")) for k in identity]
        uncorroborated = logged.alias("l").join(
            F.broadcast(repeated).alias("r"), on=same_line, how="left_anti"
        )
    return canonical.unionByName(uncorroborated.select(*commits.columns))


def build_events(commits: DataFrame, snapshots: DataFrame, broadcast_logged: bool = False) -> DataFrame:
    """One row per replayed event (commit or snapshot: the snapshots to replay, see
    :func:`replayed_snapshots`) in a common shape (``broadcast_logged``: see
    :func:`without_corroborating_logs`)."""
    commit_events = without_corroborating_logs(commits, broadcast_logged).select(
        *QUEUE_KEY,
        "key_kind",
        F.col("committed_at").alias("event_at"),
        F.lit(COMMIT_RANK).alias("event_rank"),
        "source_file",
        F.coalesce("line_no", F.lit(0)).alias("line_rank"),
        F.col("offset").alias("commit_offset"),
        F.lit(None).cast("long").alias("snapshot_offset"),
        "line_no",
        "client_host",
        "evidence",
        "commit_path",
        "_file_hash",
    )
    snapshot_events = snapshots.select(
        *QUEUE_KEY,
        "key_kind",
        F.col("snapshot_at").alias("event_at"),
        F.lit(SNAPSHOT_RANK).alias("event_rank"),
        "source_file",
        F.lit(0).cast("long").alias("line_rank"),
        F.lit(None).cast("long").alias("commit_offset"),
        F.col("offset").alias("snapshot_offset"),
        F.lit(None).cast("long").alias("line_no"),
        F.lit(None).cast("string").alias("client_host"),
        F.lit(None).cast("string").alias("evidence"),
        F.lit(None).cast("string").alias("commit_path"),
        F.lit(None).cast("string").alias("_file_hash"),
    )
    return commit_events.unionByName(snapshot_events)


def numbered(values: DataFrame, name: str) -> DataFrame:
    """The distinct rows of ``values`` numbered 0, 1, ... in their sort order, as ``name``.

    A dictionary of queues or landed files, not of events: it is sorted in one partition
    (distinct rows sorted by all their columns, so the numbering is the same every time).
    """
    return (
        values.distinct()
        .coalesce(1)
        .sortWithinPartitions(*values.columns)
        .withColumn(name, F.monotonically_increasing_id())
    )


@dataclass(frozen=True)
class EventIds:
    """Integer stand-ins for the text that names a queue and a landed file.

    The replay shuffles, sorts and hands every event to its kernel; with the queue key (four
    strings and an int) and the file (a path of ~100 bytes, a 64-byte hash) as two integers,
    each row is some 200 bytes narrower and rows compare as numbers. Both
    dictionaries are small (queues, files) and join by broadcast: no shuffle of the events.
    """

    queues: DataFrame  # QUEUE_KEY, QUEUE_ID
    files: DataFrame  # FILE_KEY, FILE_ID, PATH_ID

    @classmethod
    def of(
        cls,
        commits: DataFrame,
        snapshots: DataFrame,
        files: DataFrame | None = None,
        commit_queues: DataFrame | None = None,
    ) -> EventIds:
        """Number every queue and file of the interval's bronze commits and snapshots.

        ``files`` (FILE_KEY rows), when the caller knows them, are the landed files the events
        may come from: a superset numbers the events' files in the same order, so the replay
        is the same, and the events are not scanned for them. Snapshot events carry no file
        hash (build_events): their files are named with a null ``_file_hash``. Likewise
        ``commit_queues`` (QUEUE_KEY rows): a superset of the commits' queues, which are then not
        scanned for them; the snapshots' queues are always taken from their rows (a broadcasting
        client's offsets are replayed as a group of their own: replayed_snapshots).
        """
        if commit_queues is None:
            commit_queues = commits.select(*QUEUE_KEY)
        queues = commit_queues.select(*QUEUE_KEY).unionByName(snapshots.select(*QUEUE_KEY))
        if files is None:
            files = commits.select(*FILE_KEY).unionByName(
                snapshots.select("source_file", F.lit(None).cast("string").alias("_file_hash"))
            )
        in_text_order = files.select(
            F.concat(expressions.spark(OBSERVATION_PATH), F.lit(OBSERVATION_SEQ_SEPARATOR)).alias(_PATH_TEXT),
            *FILE_KEY,
        )
        numbered_files = numbered(in_text_order, FILE_ID).drop(_PATH_TEXT)
        path_id = F.min(FILE_ID).over(Window.partitionBy("source_file"))
        return cls(numbered(queues, QUEUE_ID), numbered_files.withColumn(PATH_ID, path_id))

    @property
    def file_names(self) -> DataFrame:
        """The text each FILE_ID stands for (FILE_KEY, FILE_ID)."""
        return self.files.select(*FILE_KEY, FILE_ID)

    def encode(self, rows: DataFrame, *, files: bool = True, known_only: bool = False) -> DataFrame:
        """``rows`` with QUEUE_ID (and FILE_ID, PATH_ID) in place of the text they stand for.

        Every row must have its ids (see :func:`with_id`); with ``known_only``, rows of a queue
        the dictionary lacks are left out instead (a checkpointed queue with no event in the
        interval: the next checkpoint carries it from the seed).
        """
        coded = with_id(rows, self.queues, QUEUE_KEY, known_only=known_only)
        return with_id(coded, self.files, FILE_KEY, known_only=known_only) if files else coded

    def decode(self, rows: DataFrame) -> DataFrame:
        """``rows`` with the queue key and the file's text back, beside their ids."""
        return rows.join(F.broadcast(self.queues), on=QUEUE_ID).join(F.broadcast(self.file_names), on=FILE_ID)


def with_id(
    rows: DataFrame, dictionary: DataFrame, key: tuple[str, ...], *, known_only: bool = False
) -> DataFrame:
    """``rows`` with ``dictionary``'s id in place of ``key`` (null-safe: a null is a value too).

    A row whose key the dictionary lacks fails the query, never silently dropped (a dictionary
    that does not cover the events is a bug, not data to lose); with ``known_only`` it is left out.
    """
    d = F.broadcast(dictionary).alias("d")
    match = [F.col(f"r.{k}").eqNullSafe(F.col(f"d.{k}")) for k in key]
    kept = [F.col(f"r.{c}") for c in rows.columns if c not in key]
    if known_only:
        ids = [F.col(f"d.{c}") for c in dictionary.columns if c not in key]
        return rows.alias("r").join(d, on=match).select(*ids, *kept)
    missing = F.raise_error(
        F.concat(
            F.lit(f"no id for the {'/'.join(key)} "), F.to_json(F.struct(*[F.col(f"r.{k}") for k in key]))
        )
    )
    ids = [F.coalesce(F.col(f"d.{c}"), missing).alias(c) for c in dictionary.columns if c not in key]
    return rows.alias("r").join(d, on=match, how="left").select(*ids, *kept)


def _seed_events(seed: DataFrame) -> DataFrame:
    """One leading row per checkpointed queue: the checkpoint's state, no offset of its own
    (the event columns it lacks are null in the union with the events; its ``client_host`` is
    the host of the checkpoint's last commit).

    Its null ``event_at`` sorts before every event (ascending order puts nulls first), so
    the replay's kernel reads the seed from the queue's first row: no join, one sort.
    """
    return seed.select(
        QUEUE_ID,
        "key_kind",
        F.lit(None).cast("timestamp").alias("event_at"),
        F.lit(SEED_RANK).alias("event_rank"),
        F.lit(-1).cast("long").alias(FILE_ID),
        F.lit(-1).cast("long").alias(PATH_ID),
        F.lit(0).cast("long").alias("line_rank"),
        F.col("last_commit_client_host").alias("client_host"),
        *SEED_STATE,
    )


def with_replayed_state(events: DataFrame, seed: DataFrame, kernel: Callable = replay_batches) -> DataFrame:
    """Add both semantics' state to every event, continuing from ``seed``.

    Needs ``build_events`` rows with their queue and file as ids, and checkpoint rows
    (``seed``, may be empty) with their queue as an id (:meth:`EventIds.encode`). Spark
    shuffles the events by queue (the seed joins each queue's events as its leading row); the
    kernel sorts each partition in REPLAY_ORDER (:func:`pipelines.replay.kernel.replayed`) and
    replays it in one pass. Adds STATE_COLUMNS: EVENT_SEQ, previous_snapshot_offset,
    stored_offset, previous_stored_offset, stored_offset_before, stored_before_source,
    is_regression, client_offset_after, commit_regressions_between, commit_regressions_after,
    settled_commit_offset, previous_commit_at, previous_commit_host.

    ``kernel``: the function Spark runs over each partition (``mapInArrow``); another than
    replay_batches may also write what it replayed and return only some rows (jobs.io.replay_writer).
    """
    seeded = events.unionByName(_seed_events(seed), allowMissingColumns=True)
    # the kernel sorts each partition itself, not Spark (docs/experiments.md, "The replay's order
    # sorted by its kernel")
    by_queue = seeded.repartition(QUEUE_ID)
    state = StructType(
        [
            *[f for f in seeded.schema.fields if f.name not in SEED_STATE],
            *[StructField(c, from_arrow_type(STATE_TYPES[c])) for c in STATE_COLUMNS],
        ]
    )
    return by_queue.mapInArrow(kernel, state)
