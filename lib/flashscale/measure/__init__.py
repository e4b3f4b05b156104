"""Measurement: fio jobs, sweeps over their axes, preconditioning, and the tidy results table.

    fio        jobs as typed values, rendered, run with JSON output, validated and parsed
    sweep      the declared axes (rw x bs x numjobs x iodepth [x nrfiles]) expanded in one place
    results    the results table's columns (a contract), rows.jsonl, results.parquet, campaign directories
"""
