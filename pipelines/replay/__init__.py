"""Replay RocketMQ's two commit semantics over the evidence of one interval: :func:`replay`.

Per queue (cluster, broker, topic, consumer_group, queue_id), events are ordered by
``REPLAY_ORDER`` (pipelines.replay.kernel): time, then snapshots before commits at the same
instant (a snapshot "at or before" a commit), then the landed file (path, then content hash)
and line. Replay starts from the state a checkpoint holds at the interval's start, so two
consecutive runs give exactly the rows one run over both intervals gives, but for a log-told
commit whose commit-stream record lies past the first interval's end: each run replays its own
(same offset; the README's replay rules).

- Broker semantics (overwrite-on-commit): ``stored_offset_before`` is the previous commit's
  offset, unless a snapshot taken at least ``SNAPSHOT_SETTLE_SECONDS`` after that commit came
  since (the table moved: a failover, a server-side reset), then that snapshot's; with no
  commit, the latest snapshot at or before the commit.
- Client semantics (increase-only): ``client_offset_after`` is the high-water mark: the
  largest of the stored offset the client started from and every offset committed since.
- A commit below ``stored_offset_before`` is a regression.

Example, one queue, no checkpoint::

    event       offset | stored_offset_before  client_offset_after  is_regression
    snapshot    100    |
    commit      120    | 100 (snapshot)        120                  false
    commit      90     | 120 (commit)          120                  true
    commit      130    | 90  (commit)          130                  false

The modules: ``events`` (the events in one shape, their ids and order), ``kernel`` (both
semantics over a partition, in Arrow), ``projections`` (the silver rows, declared once for
Spark and Arrow), ``tables`` (the silver tables in Spark), ``explain`` (regressions and the
resets logged near them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame

from pipelines.replay.events import EventIds, build_events, with_replayed_state
from pipelines.replay.kernel import replay_batches
from pipelines.replay.tables import next_checkpoint, regressions, replayed_commits, stored_offset_timeline


@dataclass(frozen=True)
class ReplayResult:
    commits: DataFrame | None  # silver/offset_commits_replayed (None: the replay's workers wrote it)
    timeline: DataFrame | None  # silver/stored_offset_timeline (None: the replay's workers wrote it)
    regressions: DataFrame  # silver/offset_regressions
    checkpoint: DataFrame  # silver/replay_checkpoints (without as_of)
    state: DataFrame  # every replayed event with both semantics' state, queue and file as ids: the four derive from it
    ids: EventIds  # the dictionaries of those ids, which the four read too

    @property
    def shared(self) -> tuple[DataFrame, ...]:
        """What more than one of the four tables reads: worth computing once and caching (in
        this order: a cached plan reads only what was cached before it)."""
        return (self.ids.queues, self.ids.files, self.state)


def replay(
    commits: DataFrame,
    snapshots: DataFrame,
    seed: DataFrame,
    broadcast_logged: bool = False,
    landed_files: DataFrame | None = None,
    kernel_for: Callable[[EventIds], Callable] | None = None,
    kept_partitions: int | None = None,
    commit_queues: DataFrame | None = None,
) -> ReplayResult:
    """Replay one interval's bronze commits and snapshots, continuing from ``seed``
    (``broadcast_logged``: see :func:`pipelines.replay.events.without_corroborating_logs`; ``landed_files``
    and ``commit_queues``: the landed files the events may come from and the queues the commits may
    be of, see :meth:`pipelines.replay.events.EventIds.of`).

    ``kernel_for``, given the interval's ids, returns a kernel that writes the replayed
    commits and the timeline itself and returns only the rows the regressions and the
    checkpoint read (see jobs.io.replay_writer); the result then has no ``commits`` or ``timeline``.
    Those rows are few (a queue's last events and the regressions) but come in the replay's
    shuffle partitions: with ``kept_partitions`` the regressions and the checkpoint read them
    merged into that many, so that their scans of those rows run that many tasks, not one a
    shuffle partition (docs/experiments.md, "The replay's kept rows in one partition a core").
    ``state`` stays as the kernel gives it: a caller caches and computes it first, so that the
    kernel runs a task a shuffle partition, and the merged reads take its cached rows.
    """
    ids = EventIds.of(commits, snapshots, landed_files, commit_queues)
    events = ids.encode(build_events(commits, snapshots, broadcast_logged))
    kernel = kernel_for(ids) if kernel_for is not None else replay_batches
    state = with_replayed_state(events, ids.encode(seed, files=False, known_only=True), kernel)
    kept = state.coalesce(kept_partitions) if kernel_for is not None and kept_partitions else state
    # the state keeps its ids (narrower to cache); the tables get the text back
    decoded = ids.decode(kept)
    return ReplayResult(
        commits=replayed_commits(decoded) if kernel_for is None else None,
        timeline=stored_offset_timeline(decoded) if kernel_for is None else None,
        regressions=regressions(decoded),
        checkpoint=next_checkpoint(kept, seed, ids.queues),
        state=state,
        ids=ids,
    )
