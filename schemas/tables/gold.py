"""Gold tables: the marts analysts read (lag and throughput)."""

from __future__ import annotations

from schemas.tables.spec import BOOLEAN, DATE, DOUBLE, INT, LONG, STRING, TIMESTAMP, TableSpec, fields

CONSUMER_LAG = TableSpec(
    layer="gold",
    name="consumer_lag",
    grain="one row per (broker offset observation, consumer group, queue)",
    keys=("cluster", "broker", "topic", "consumer_group", "queue_id", "observed_at"),
    event_time="observed_at",
    partition_by=("observed_date",),
    high_cardinality=("broker_offset", "consumer_offset", "consumer_offset_at", "reported_consumer_offset"),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("queue_id", INT, False),
        ("observed_at", TIMESTAMP, False),
        ("broker_offset", LONG, False),
        ("broker_min_offset", LONG, True),
        # replayed stored offset as of observed_at (null: no offset known yet)
        ("consumer_offset", LONG, True),
        ("consumer_offset_at", TIMESTAMP, True),
        # what the admin tool itself reported, when the observation came from consumerProgress
        ("reported_consumer_offset", LONG, True),
        ("lag_messages", LONG, True),
        # how long ago the broker's log end was at consumer_offset: interpolated between the two
        # max-offset observations around it within [replay] lag_history (pipelines.marts.time_lag);
        # 0 when caught up; when the offset is older than the first of them, at least the time since
        # that one, and is_lag_seconds_bounded is true; null without a consumer offset
        ("lag_seconds", DOUBLE, True),
        ("is_lag_seconds_bounded", BOOLEAN, True),
        ("observed_date", DATE, False),
    ),
)

CONSUMER_LAG_BY_GROUP = TableSpec(
    layer="gold",
    name="consumer_lag_by_group",
    grain="one row per (cluster, topic, consumer group, observation time)",
    keys=("cluster", "topic", "consumer_group", "observed_at"),
    event_time="observed_at",
    partition_by=("observed_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("observed_at", TIMESTAMP, False),
        ("queues", LONG, False),
        ("total_lag_messages", LONG, True),
        ("worst_lag_messages", LONG, True),
        ("worst_broker", STRING, True),
        ("worst_queue_id", INT, True),
        # the largest lag_seconds of its queues (a bound when that queue's is one)
        ("worst_lag_seconds", DOUBLE, True),
        ("is_worst_lag_seconds_bounded", BOOLEAN, True),
        ("observed_date", DATE, False),
    ),
)

CONSUME_THROUGHPUT = TableSpec(
    layer="gold",
    name="consume_throughput",
    grain="one row per (cluster, topic, consumer group, tumbling window)",
    keys=("cluster", "topic", "consumer_group", "window_start"),
    event_time="window_start",
    partition_by=("window_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("window_start", TIMESTAMP, False),
        ("window_end", TIMESTAMP, False),
        ("messages_consumed", LONG, False),
        ("messages_per_second", DOUBLE, False),
        ("observations", LONG, False),
        ("window_date", DATE, False),
        # the topic's messages produced in the window (gold/produce_throughput summed over its queues):
        # the group keeps up when it consumes about as fast; null where no max offset was observed
        ("messages_produced", LONG, True),
        ("produced_per_second", DOUBLE, True),
    ),
)

PRODUCE_THROUGHPUT = TableSpec(
    layer="gold",
    name="produce_throughput",
    grain="one row per (cluster, broker, topic, queue, tumbling window) with a max-offset observation",
    keys=("cluster", "broker", "topic", "queue_id", "window_start"),
    event_time="window_start",
    partition_by=("window_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("topic", STRING, False),
        ("queue_id", INT, False),
        ("window_start", TIMESTAMP, False),
        ("window_end", TIMESTAMP, False),
        # the positive increments of the max offset, each from the queue's observation before it
        # (at most [replay] lag_history earlier), in the window of the later one
        ("messages_produced", LONG, False),
        ("messages_per_second", DOUBLE, False),
        ("observations", LONG, False),
        # times the max offset went down (a queue truncated, a broker rebuilt): flagged, never subtracted
        ("max_offset_decreases", LONG, False),
        # the largest max offset observed in the window
        ("max_offset", LONG, False),
        ("window_date", DATE, False),
    ),
)

DUPLICATE_EXPOSURE = TableSpec(
    layer="gold",
    name="duplicate_exposure",
    grain="one row per (cluster, topic, consumer group, UTC day) with a regression",
    keys=("cluster", "topic", "consumer_group", "day_start"),
    event_time="day_start",
    partition_by=("day",),
    schema=fields(
        ("cluster", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("day_start", TIMESTAMP, False),
        ("regressions", LONG, False),
        ("queues", LONG, False),
        # deliveries the day's regressions add: each regression's size (what it sends back beyond what an
        # earlier one already had), so a message two regressions send back counts twice: it comes twice more
        ("extra_deliveries", LONG, False),
        # those of regressions nobody asked for: every cause but an operator's reset (or a pull consumer's seek)
        ("unintended_extra_deliveries", LONG, False),
        # the largest silver/offset_regressions messages_consumed_twice of the day (one regression's exposure)
        ("largest_messages_consumed_twice", LONG, False),
        ("unexplained_regressions", LONG, False),
        ("first_detected_at", TIMESTAMP, False),
        ("last_detected_at", TIMESTAMP, False),
        ("day", DATE, False),
    ),
)

CONSUMER_STATUS = TableSpec(
    layer="gold",
    name="consumer_status",
    grain="one row per (cluster, topic, consumer group, status window) with a lag observation or a regression",
    keys=("cluster", "topic", "consumer_group", "window_start"),
    event_time="window_start",
    partition_by=("window_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("window_start", TIMESTAMP, False),
        ("window_end", TIMESTAMP, False),
        # OK | WARN | STALL | STOP | REWIND | ERR: the first rule of pipelines.marts.status that holds
        ("status", STRING, False),
        # the evidence that decided it, in words, and when it was seen
        ("status_reason", STRING, False),
        ("evidence_at", TIMESTAMP, True),
        ("lag_observations", LONG, False),
        ("first_lag_messages", LONG, True),
        ("last_lag_messages", LONG, True),
        ("worst_lag_seconds", DOUBLE, True),
        ("commits", LONG, False),
        ("messages_consumed", LONG, False),
        ("regressions", LONG, False),
        # the most messages an observation found expired before they were consumed
        ("expired_messages", LONG, True),
        ("window_date", DATE, False),
    ),
)
