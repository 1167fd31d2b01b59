"""dndask's benchmark suite: dndask, plain dask.array and Heat side by side.

Run it with ``python -m bench`` (or ``make bench``); ``python -m bench --help``
lists the options. The package imports nothing beyond the standard library at
the top level, because the Heat side (``bench/_heat_cases.py``) imports
:mod:`bench.workloads` and :mod:`bench._rss` from Heat's own virtual
environment, where dndask and dask are not installed.

Modules:

- :mod:`bench.workloads`: the cases, their array shapes and the bytes each must move;
- :mod:`bench._rss`: peak resident memory above a baseline, sampled in a thread;
- :mod:`bench.systems`: the dndask and dask.array sides, timed on one loopback cluster;
- :mod:`bench.heat_venv`: Heat's virtual environment and its runs under ``mpirun``;
- :mod:`bench.floor`: measured copy bandwidth and the physical floor of each case;
- :mod:`bench.scaling`: graph size and build time at thousands of ranks (nothing runs);
- :mod:`bench.report`: the tables, ``docs/performance.md`` and the plot;
- :mod:`bench.latency`: the cost of one small step (``python -m bench --latency``);
- :mod:`bench.weight`: ``import dndask`` time and per-worker memory beside plain Dask
  (``python -m bench.weight``; its own section of ``docs/performance.md``);
- :mod:`bench.shm_stages`: where the time of a shared-memory ``resplit_`` goes, stage by
  stage (``python -m bench.shm_stages``; docs/performance.md);
- :mod:`bench.heat_face`: the Heat face's torch kernels against numpy's, and one round of
  Heat's ``test_unfold`` loop per split (``python -m bench.heat_face``).
"""
