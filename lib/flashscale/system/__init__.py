"""The machine: the only layer that reads /proc, /sys, /dev and the mount table, runs commands, and records and
undoes what flashscale creates.

    commands   the one place external commands run (``Runner``; ``RecordingRunner`` for exact command plans)
    devices    ``System``: block devices, identities, mounts, loop devices, cgroups, NUMA, as the machine shows them
    throttle   cgroup v1/v2 bandwidth caps per device
    undo       how each kind of thing made is undone, and the check that it is gone
    teardown   the manifest: everything created is recorded (``record(kind, **details)``) and undone last first
    reap       undo what an interrupted run's manifest lists (``flashscale reap``)
"""
