"""A few column expressions, declared once and rendered for Spark (``Column``) and Arrow (``pyarrow.compute``).

The replay's silver rows are computed by Spark on a cluster and by the replay's Python workers
in Arrow on the embedded lake (jobs.io.replay_writer): each rule (a regression's size, the
position of an observation, what counts as consumed) is written once as an :data:`Expr` and
rendered by :func:`spark` or :func:`arrow`, which give the same values, nulls included:

    >>> size = If(Col("is_regression"), Sub(Col("stored_offset_before"), Col("commit_offset")))
    >>> arrow(size, pa.table({"is_regression": [True, False, None], "stored_offset_before": [9, 9, 9],
    ...                       "commit_offset": [4, 4, 4]})).to_pylist()
    [5, None, None]

SQL's semantics hold in both: a comparison with a null is null; ``If`` takes the otherwise
branch (null when none) where its condition is null; ``Coalesce``, ``Greatest`` and ``JoinText``
skip nulls.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column
from pyspark.sql import functions as F


@dataclass(frozen=True)
class Col:
    name: str


@dataclass(frozen=True)
class Lit:
    value: object


@dataclass(frozen=True)
class IsNull:
    of: Expr


@dataclass(frozen=True)
class NotNull:
    of: Expr


@dataclass(frozen=True)
class Not:
    of: Expr


@dataclass(frozen=True)
class And:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class Less:
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Equal:
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Sub:
    left: Expr
    right: Expr


@dataclass(frozen=True)
class If:
    """``then`` where ``condition`` holds, else ``otherwise`` (null when None)."""

    condition: Expr
    then: Expr
    otherwise: Expr | None = None


@dataclass(frozen=True)
class Coalesce:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class Greatest:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class ToDate:
    """The UTC date of a timestamp."""

    of: Expr


@dataclass(frozen=True)
class Text:
    """A number as its decimal text."""

    of: Expr


@dataclass(frozen=True)
class PadLeft:
    """Text padded on the left with ``fill`` to ``width`` characters (cut to ``width`` when longer)."""

    of: Expr
    width: int
    fill: str


@dataclass(frozen=True)
class Replace:
    """Text with every occurrence of ``old`` replaced by ``new``."""

    of: Expr
    old: str
    new: str


@dataclass(frozen=True)
class JoinText:
    """The texts joined with ``separator``, nulls skipped."""

    separator: str
    parts: tuple[Expr, ...]


Expr = (
    Col
    | Lit
    | IsNull
    | NotNull
    | Not
    | And
    | Or
    | Less
    | Equal
    | Sub
    | If
    | Coalesce
    | Greatest
    | ToDate
    | Text
    | PadLeft
    | Replace
    | JoinText
)


def spark(expr: Expr) -> Column:
    """``expr`` as a Spark column."""
    match expr:
        case Col(name):
            return F.col(name)
        case Lit(value):
            return F.lit(value)
        case IsNull(of):
            return spark(of).isNull()
        case NotNull(of):
            return spark(of).isNotNull()
        case Not(of):
            return ~spark(of)
        case And(parts):
            return reduce(lambda a, b: a & b, map(spark, parts))
        case Or(parts):
            return reduce(lambda a, b: a | b, map(spark, parts))
        case Less(left, right):
            return spark(left) < spark(right)
        case Equal(left, right):
            return spark(left) == spark(right)
        case Sub(left, right):
            return spark(left) - spark(right)
        case If(condition, then, otherwise):
            chosen = F.when(spark(condition), spark(then))
            return chosen if otherwise is None else chosen.otherwise(spark(otherwise))
        case Coalesce(parts):
            return F.coalesce(*map(spark, parts))
        case Greatest(parts):
            return F.greatest(*map(spark, parts))
        case ToDate(of):
            return F.to_date(spark(of))
        case Text(of):
            return spark(of).cast("string")
        case PadLeft(of, width, fill):
            return F.lpad(spark(of), width, fill)
        case Replace(of, old, new):
            return F.replace(spark(of), F.lit(old), F.lit(new))
        case JoinText(separator, parts):
            return F.concat_ws(separator, *map(spark, parts))
    raise TypeError(f"not an expression: {expr!r}")


def arrow(expr: Expr, table: pa.Table) -> pa.ChunkedArray | pa.Array | pa.Scalar:
    """``expr`` over the columns of ``table``, with pyarrow.compute.

    A text column may come dictionary-encoded (a replayed row's queue and file, each the same on
    many rows: pipelines.replay.kernel.Names): a column read as it is stays so, ``Replace`` rewrites
    its dictionary, not every row, and every other expression reads its values."""
    match expr:
        case Col(name):
            return table.column(name)
        case Lit(value):
            return pa.scalar(value)
        case IsNull(of):
            return pc.is_null(_values(of, table))
        case NotNull(of):
            return pc.is_valid(_values(of, table))
        case Not(of):
            return pc.invert(_values(of, table))
        case And(parts):
            return reduce(pc.and_kleene, (_values(p, table) for p in parts))
        case Or(parts):
            return reduce(pc.or_kleene, (_values(p, table) for p in parts))
        case Less(left, right):
            return pc.less(_values(left, table), _values(right, table))
        case Equal(left, right):
            return pc.equal(_values(left, table), _values(right, table))
        case Sub(left, right):
            return pc.subtract(_values(left, table), _values(right, table))
        case If(condition, then, otherwise):
            chosen = _values(then, table)
            other = _values(otherwise, table) if otherwise is not None else pa.scalar(None, chosen.type)
            return pc.if_else(pc.fill_null(_values(condition, table), False), chosen, other)
        case Coalesce(parts):
            return pc.coalesce(*(_values(p, table) for p in parts))
        case Greatest(parts):
            return pc.max_element_wise(*(_values(p, table) for p in parts), skip_nulls=True)
        case ToDate(of):
            return pc.cast(_values(of, table), pa.date32())
        case Text(of):
            return pc.cast(_values(of, table), pa.string())
        case PadLeft(of, width, fill):
            return pc.utf8_slice_codeunits(pc.utf8_lpad(_values(of, table), width, fill), 0, width)
        case Replace(of, old, new):
            return _per_value(arrow(of, table), lambda text: pc.replace_substring(text, old, new))
        case JoinText(separator, parts):
            return pc.binary_join_element_wise(
                *(_values(p, table) for p in parts), separator, null_handling="skip"
            )
    raise TypeError(f"not an expression: {expr!r}")


def _is_dictionary(value) -> bool:
    return isinstance(value, pa.Array | pa.ChunkedArray) and pa.types.is_dictionary(value.type)


def _values(expr: Expr, table: pa.Table) -> pa.ChunkedArray | pa.Array | pa.Scalar:
    """``expr``'s values, a dictionary-encoded column decoded (compute functions take plain arrays)."""
    value = arrow(expr, table)
    return value.cast(value.type.value_type) if _is_dictionary(value) else value


def _per_value(value, function):
    """``function`` of each row's value; of a dictionary-encoded column's dictionary, not of its rows."""
    if not _is_dictionary(value):
        return function(value)
    if isinstance(value, pa.ChunkedArray):
        return pa.chunked_array([_per_value(chunk, function) for chunk in value.chunks], value.type)
    return pa.DictionaryArray.from_arrays(value.indices, function(value.dictionary))


def holds(condition: Expr, table: pa.Table) -> pa.Array:
    """Where ``condition`` holds over ``table``'s rows (null: it does not, as in a SQL filter)."""
    return pc.fill_null(arrow(condition, table), False)
