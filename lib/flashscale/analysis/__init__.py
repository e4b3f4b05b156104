"""Analysis: pure functions on the tidy results table; no I/O but through ``measure``, no plotting.

    core       measured rows, point means, baseline, best point, efficiency and tax: each defined once
    inputs     what ``core.measured`` refuses, naming the row, before any number is computed
    layout_tax tax across thread counts, its steadiness, the winning layout
    stats      repetition statistics and the intervals of efficiency and tax
    significance  the tax test: is a tax real or within the noise of the repetitions
    repetitions   when a point has run enough: the stopping rule of a sweep with a precision (PRECISION)
    builds     builds as replicates (BUILDS): variance between builds of a layout and between runs on one build
    scaling    scaling curves, Amdahl and USL fits
    plateau    the knee, and whether a curve flattened within the measured range at all
    saturation the fewest jobs (then queue depth) whose runs show 95% of a layout's best, and what one job delivers
    prediction the prediction model (its README.md): one device's curve, the routing, the ceilings, a layer's
               cost, the prediction before a layout is built, its score after, and ``flashscale plan``'s sizing
    compare    campaigns side by side
    latency, metadata, shared_file   the tables of the latency, metadata and N-to-1 studies (of what ``measure.raw``
                                     read from each run's files)
    monitor    a run's series over its time: the devices and CPUs sampled (the bottleneck), fio's bandwidth logs
    findings   every sentence said about a measurement
    evidence   the sentences on the runs themselves: precondition, truth check, too short, steady rounds
"""
