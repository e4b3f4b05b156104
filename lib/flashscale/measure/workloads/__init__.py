"""Applications beside fio, run on every layout of a campaign like a fio point (``campaign.run(workloads=...)``).

    bonnie    bonnie++: sequential block write / rewrite / read, seeks, file create / stat / delete; processes an axis
    pgbench   pgbench on a throwaway PostgreSQL cluster made on the layout (``system.postgres``); scale, clients axes
    transfer  many files written, then copied by parallel streams: files/s and bytes/s, against fio on the same devices

Each is a frozen dataclass called as ``workload(recorder, layout, cgroup_procs)``: it runs inside the layout's
throttled cgroup, monitored (``measure.monitoring``), keeps its command lines, raw output and environment in
``raw/<layout>/<workload>-<point>/rep<k>/``, and one row per metric (``common.metric_row``: ``workload``, ``metric``,
``value``, ``unit``, phase ``workload``) with ``recorder.keep``.
"""
