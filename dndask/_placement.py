"""Where a DNDarray's tasks run: one rule per key name, per array, derived from the keys.

A DNDarray's chunk ``r`` is on rank ``r``; so is every dndask-made task that produces or
feeds it. Rather than a table of every key (copied from operation to operation), each
array holds a :class:`Ranks`: for each *name* of key its graph adds, one rule, and links
to the :class:`Ranks` of the arrays it was computed from.

- :class:`RankOf` places every key of a chunk grid: the rank is the key's block index
  along the split axis (rank 0 when there is none). One small value per array, whatever
  ``P``.
- :class:`Table` places keys that are not chunks (a relayout's slices, a reduction's
  partials): ``key -> rank`` for the keys of one layer, ``O(P)`` entries.

What an array adds is bounded by its own layers; the links are shared, not copied, so a
chain of ``n`` operations keeps ``O(n)`` rules in all (as its graph keeps ``O(n)`` layers)
and building it takes ``O(n)`` time. When a graph is submitted, :meth:`Ranks.workers`
gives the key -> worker lookup that :class:`dndask._compute.Placement` reads, resolved key
by key for the keys of that graph only (:class:`WorkerTable`). Persisting starts afresh:
the graph is then the chunks, and so is the placement.

This module is pure (no Dask): it only reads keys.

>>> r = Ranks.of_chunks("x", 0)
>>> r.rank(("x", 2, 0)), r.rank(("y", 0, 0))
(2, None)
>>> r.update({("x-piece", 1, 0): 3})
>>> r.rank(("x-piece", 1, 0))
3
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple


def key_name(key) -> str:
    """The name of a Dask key: its first element (a string key is its own name)."""
    return key[0] if isinstance(key, tuple) else key


class RankOf(NamedTuple):
    """The rule of a chunk grid split along ``axis``: a key's rank is its block index there.

    ``axis=None`` (one chunk, held whole) places the chunk on rank 0.

    >>> RankOf(1)(("x", 0, 3)), RankOf(None)(("x", 0, 0))
    (3, 0)
    """

    axis: int | None

    def __call__(self, key) -> int | None:
        if self.axis is None:
            return 0
        if not isinstance(key, tuple) or len(key) <= self.axis + 1:
            return None
        return key[self.axis + 1]


class Table(NamedTuple):
    """The rule of keys that are not chunks: ``entries`` (key -> rank), else ``fallback``."""

    entries: Mapping
    fallback: RankOf | None = None

    def __call__(self, key) -> int | None:
        rank = self.entries.get(key)
        if rank is None and self.fallback is not None:
            return self.fallback(key)
        return rank


def _with_entries(rule, entries: dict):
    """``rule`` (or no rule) with the explicit ``entries`` added (they win)."""
    if rule is None:
        return Table(entries)
    if isinstance(rule, Table):
        return Table({**rule.entries, **entries}, rule.fallback)
    return Table(entries, rule)


class Ranks:
    """The placement of one array's graph: rules by key name, and its parents' placements.

    Mutable only through :meth:`update`, while the array that owns it is being built;
    links to parents are shared (never copied), so a copy is ``O(own rules)``.
    """

    __slots__ = ("parents", "rules")

    def __init__(self, rules: Mapping | None = None, parents: Sequence[Ranks] = ()):
        self.rules: dict = dict(rules or {})
        self.parents: tuple[Ranks, ...] = tuple(parents)

    @classmethod
    def of_chunks(cls, name: str, split: int | None, parents: Sequence[Ranks] = ()) -> Ranks:
        """The placement of the chunk grid ``name`` split along ``split``, above ``parents``."""
        return cls({name: RankOf(split)}, parents)

    def copy(self) -> Ranks:
        """A copy whose own rules can be updated apart (the parents are shared)."""
        return Ranks(self.rules, self.parents)

    def update(self, other: Mapping | Ranks) -> None:
        """Add ``other``: a ``key -> rank`` table (its entries win), or another :class:`Ranks`.

        A table is grouped by key name into one :class:`Table` rule per name.
        """
        if isinstance(other, Ranks):
            if other is not self and other not in self.parents:
                self.parents = (*self.parents, other)
            return
        groups: dict = {}
        for key, rank in other.items():
            groups.setdefault(key_name(key), {})[key] = rank
        for name, entries in groups.items():
            self.rules[name] = _with_entries(self.rules.get(name), entries)

    def flat(self) -> dict:
        """Every rule of this placement and its ancestors, by key name (nearer ones win).

        The ancestors are walked once each (a depth-first post-order, no recursion), so
        this is linear in the number of arrays the graph was built from.
        """
        order: list[Ranks] = []
        seen: set[int] = set()
        stack: list[tuple[Ranks, bool]] = [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in reversed(node.parents))
        rules: dict = {}
        for node in order:  # ancestors before descendants: a descendant's rule wins
            rules.update(node.rules)
        return rules

    def rank(self, key) -> int | None:
        """The rank ``key`` runs on, or ``None`` when dndask does not place it."""
        rule = self.flat().get(key_name(key))
        return None if rule is None else rule(key)

    def size(self) -> int:
        """The entries this array holds itself: one per rule, plus each table's keys."""
        return sum(len(r.entries) + 1 if isinstance(r, Table) else 1 for r in self.rules.values())

    def workers(self, workers: Sequence[str]) -> WorkerTable:
        """The key -> worker lookup of this placement (rank ``r`` is ``workers[r]``)."""
        return WorkerTable([(self.flat(), tuple(workers))])

    @classmethod
    def join(cls, *parts: Mapping | Ranks) -> Ranks:
        """One placement of ``parts`` (tables and placements; later ones win)."""
        out = cls()
        for part in parts:
            out.update(part)
        return out


class WorkerTable:
    """A key -> worker address lookup, resolved per key from rank rules (no per-key dict).

    Made by :meth:`Ranks.workers`; keys set or tables added later (:meth:`update`) win
    over earlier ones. Supports ``get``, ``[]``, ``in``, item assignment and ``update``,
    which is all that placing a submitted graph needs; it is not iterable (a chunk rule
    does not know how many chunks there are).

    >>> t = Ranks.of_chunks("x", 0).workers(["w0", "w1"])
    >>> t[("x", 1)], ("y", 0) in t
    ('w1', False)
    >>> t[("y", 0)] = "w0"
    >>> t.get(("y", 0))
    'w0'
    """

    __slots__ = ("sources",)

    def __init__(self, sources: list | None = None):
        # each source: a dict key -> worker, or (rules by name, workers by rank)
        self.sources: list = list(sources or [])

    @classmethod
    def of(cls, table: Mapping | WorkerTable) -> WorkerTable:
        """A new table that reads ``table`` (a dict is copied; a WorkerTable's sources shared)."""
        if isinstance(table, WorkerTable):
            return cls([*table.sources, {}])  # the new dict is this table's own
        return cls([dict(table)])

    def get(self, key, default=None):
        for source in reversed(self.sources):
            if isinstance(source, dict):
                found = source.get(key)
            else:
                rules, workers = source
                rule = rules.get(key_name(key))
                rank = None if rule is None else rule(key)
                found = None if rank is None or rank >= len(workers) else workers[rank]
            if found is not None:
                return found
        return default

    def __getitem__(self, key) -> str:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __setitem__(self, key, worker: str) -> None:
        if not self.sources or not isinstance(self.sources[-1], dict):
            self.sources.append({})
        self.sources[-1][key] = worker

    def update(self, other: Mapping | WorkerTable) -> None:
        """Add ``other``'s placements (they win over the ones held so far)."""
        if isinstance(other, WorkerTable):
            self.sources.extend([*other.sources, {}])  # never write into ``other``'s dicts
        else:
            self.sources.append(dict(other))
