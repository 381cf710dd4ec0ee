"""The silver tables' rows as projections of the replayed state, each declared once.

A :class:`Projection` keeps the rows its ``where`` holds for and computes each column from
the state's (pipelines.replay.kernel.STATE_COLUMNS, with the queue's and the landed file's
text). Spark renders them for silver/offset_commits_replayed, silver/stored_offset_timeline and
silver/offset_regressions (pipelines.replay.tables); on the embedded lake the replay's workers
render the first two in Arrow and keep for Spark exactly the rows :data:`REGRESSION` holds for
(pipelines.replay.kernel), so the two engines cannot disagree on a rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import pyarrow as pa
from pyspark.sql import DataFrame

from pipelines.replay import expressions
from pipelines.replay.expressions import (
    And,
    Coalesce,
    Col,
    Equal,
    Expr,
    Greatest,
    If,
    JoinText,
    Less,
    Lit,
    Not,
    NotNull,
    Or,
    PadLeft,
    Replace,
    Sub,
    Text,
    ToDate,
)
from schemas.tables import QUEUE_KEY


@dataclass(frozen=True)
class Projection:
    """The rows ``where`` holds for (all when None), with ``columns``: (name, expression) in order."""

    columns: tuple[tuple[str, Expr], ...]
    where: Expr | None = None

    def spark(self, state: DataFrame) -> DataFrame:
        kept = state if self.where is None else state.where(expressions.spark(self.where))
        return kept.select(*[expressions.spark(e).alias(name) for name, e in self.columns])

    def arrow(self, state: pa.Table) -> pa.Table:
        kept = state if self.where is None else state.filter(expressions.holds(self.where, state))
        return pa.table({name: _array(expressions.arrow(e, kept), kept.num_rows) for name, e in self.columns})


def _array(value, rows: int) -> pa.ChunkedArray | pa.Array:
    return pa.repeat(value, rows) if isinstance(value, pa.Scalar) else value


def regression_size(stored: Expr, offset: Expr) -> Expr:
    """How many messages a regression makes the group consume again: what was stored, minus the offset."""
    return Sub(stored, offset)


def messages_consumed_twice(stored: Expr, client_mark: Expr, offset: Expr) -> Expr:
    """The duplicate exposure of a regression: the messages below the group's high-water mark (the
    client's increase-only mark, or what was stored when that is higher) that it sends back to be
    consumed again. At least the regression's size; more when an earlier regression had already
    set the stored offset below the mark."""
    return Sub(Greatest((stored, client_mark)), offset)


def _same(*names: str) -> tuple[tuple[str, Expr], ...]:
    return tuple((name, Col(name)) for name in names)


IS_COMMIT = NotNull(Col("commit_offset"))
# A snapshot below the one before it, with no commit regression between them to explain it
# (a failover to a slave with an older table, a 5.x server-side reset).
SNAPSHOT_PAIR = And(
    (
        Not(IS_COMMIT),
        Less(Col("snapshot_offset"), Col("previous_snapshot_offset")),
        Equal(Col("commit_regressions_between"), Lit(0)),
    )
)
# A snapshot below the last commit before it, that commit old enough to be in the file (the
# kernel's ``settled_commit_offset``), though not below the previous snapshot: the table
# itself went back with no commit (a slave's older table after a failover).
SNAPSHOT_BEHIND_COMMIT = And(
    (Not(IS_COMMIT), Less(Col("snapshot_offset"), Col("settled_commit_offset")), Not(SNAPSHOT_PAIR))
)
COMMIT_REGRESSION = Col("is_regression")
REGRESSION = Or((COMMIT_REGRESSION, SNAPSHOT_PAIR, SNAPSHOT_BEHIND_COMMIT))
# A stable text position among a queue's observations at the same instant, in REPLAY_ORDER's
# terms: rank, landed file path, line number, the file's content hash (two versions of one path
# can hold other lines at the same instant and line number; a snapshot's is null, left out).
# The path is escaped ("%" as %25, then the separator as %7C) so that no path holds the
# separator: then the text order of ``OBSERVATION_PATH + separator`` is the order observation_seq
# gives paths, and the replay orders them so (pipelines.replay.events.EventIds).
OBSERVATION_SEQ_SEPARATOR = "|"
# In this order; undone in the reverse order (jobs.cli.asof).
OBSERVATION_PATH_ESCAPES = (("%", "%25"), (OBSERVATION_SEQ_SEPARATOR, "%7C"))
OBSERVATION_PATH = reduce(
    lambda path, escape: Replace(path, *escape), OBSERVATION_PATH_ESCAPES, Col("source_file")
)
OBSERVATION_SEQ = JoinText(
    OBSERVATION_SEQ_SEPARATOR,
    (
        Text(Col("event_rank")),
        OBSERVATION_PATH,
        PadLeft(Text(Col("line_rank")), 12, "0"),
        Col("_file_hash"),
    ),
)

REPLAYED_COMMITS = Projection(
    where=IS_COMMIT,
    columns=(
        *_same("cluster", "broker"),
        ("committed_at", Col("event_at")),
        *_same("client_host", "topic", "consumer_group", "key_kind", "queue_id"),
        ("offset", Col("commit_offset")),
        *_same("evidence", "commit_path", "stored_offset_before", "stored_before_source"),
        *_same("client_offset_after", "is_regression"),
        (
            "regression_size",
            If(COMMIT_REGRESSION, regression_size(Col("stored_offset_before"), Col("commit_offset"))),
        ),
        *_same("source_file", "line_no", "_file_hash"),
        ("commit_date", ToDate(Col("event_at"))),
    ),
)

# What the broker stored after each observation. ``consumed_increment`` is the positive part of
# the change from the previous observation: a regression never counts as negative work.
STORED_OFFSET_TIMELINE = Projection(
    columns=(
        *_same(*QUEUE_KEY),
        ("observed_at", Col("event_at")),
        ("observation_seq", OBSERVATION_SEQ),
        ("observation", If(IS_COMMIT, Lit("commit"), Lit("snapshot"))),
        *_same("stored_offset", "previous_stored_offset"),
        (
            "consumed_increment",
            Greatest((Coalesce((Sub(Col("stored_offset"), Col("previous_stored_offset")), Lit(0))), Lit(0))),
        ),
        ("observed_date", ToDate(Col("event_at"))),
    ),
)

# Commits below the stored offset, snapshot pairs and snapshots behind a commit; a snapshot event
# has no client, commit evidence or path, so those are null on its rows. The last commit before
# the regression (``_previous_commit_*``) is what its cause may rest on (pipelines.replay.explain).
_OFFSET = If(COMMIT_REGRESSION, Col("commit_offset"), Col("snapshot_offset"))
_STORED = If(
    COMMIT_REGRESSION,
    Col("stored_offset_before"),
    If(SNAPSHOT_PAIR, Col("previous_snapshot_offset"), Col("settled_commit_offset")),
)
_EVIDENCE = If(
    COMMIT_REGRESSION, Lit("commit"), If(SNAPSHOT_PAIR, Lit("snapshot_pair"), Lit("snapshot_behind_commit"))
)
OFFSET_REGRESSIONS = Projection(
    where=REGRESSION,
    columns=(
        *_same(*QUEUE_KEY),
        ("detected_at", Col("event_at")),
        ("offset", _OFFSET),
        ("stored_offset", _STORED),
        ("evidence", _EVIDENCE),
        ("client_host", Col("client_host")),
        ("commit_evidence", Col("evidence")),
        *_same("commit_path", "key_kind"),
        ("observation_seq", OBSERVATION_SEQ),
        ("source_file", Col("source_file")),
        ("regression_size", regression_size(_STORED, _OFFSET)),
        ("messages_consumed_twice", messages_consumed_twice(_STORED, Col("client_offset_after"), _OFFSET)),
        ("detected_date", ToDate(Col("event_at"))),
        ("_previous_commit_at", Col("previous_commit_at")),
        ("_previous_commit_host", Col("previous_commit_host")),
    ),
)
