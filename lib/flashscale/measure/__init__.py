"""Measurement: fio jobs, sweeps over their axes, preconditioning, and the tidy results table.

    fio        jobs as typed values, rendered, run with JSON output, validated and parsed
    ahead      each run's fio started in the ramp of the run before, held at a gate until it ends (START_AHEAD)
    batch      a point's runs in one fio process, stonewalled: each its own row and raw files (BATCH_REPS)
    sweep      the declared axes (rw x bs x numjobs x iodepth [x nrfiles]) expanded in one place
    results    the results table's columns (a contract), made from the rows
    campaign_folder   the campaign folder's files (campaign.json, rows.jsonl, ...): their one reader and writer
"""
