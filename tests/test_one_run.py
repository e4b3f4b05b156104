"""One run a point gives no interval (issue 31, 2): the command line's tables, the tax's verdict and the predictions
say "one run: no interval" instead of a zero-width interval ("379 MB/s-379 MB/s"), and a verdict that needs
repetitions says it cannot be given, never "outside" at nearly every point."""
from __future__ import annotations

import pandas as pd

from flashscale import cli
from flashscale.analysis.prediction import predict, scoring

MB = 1e6


def _table(tmp_path, runs: int = 1):
    rows = [dict(layout=layout, devices=devices, rw="read", bs=2**20, numjobs=jobs, iodepth=1, rep=rep,
                 bw_bytes=bw * MB * (1 + 0.001 * rep))
            for layout, devices, jobs, bw in (("single", 1, 1, 379), ("single", 1, 2, 390), ("jbod", 2, 1, 380),
                                              ("jbod", 2, 2, 760), ("raid0", 2, 2, 700))
            for rep in range(runs)]
    path = tmp_path / "one.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, pd.DataFrame(rows)


def test_analyze_of_one_run_a_point_says_so_in_its_table_and_verdict(tmp_path, capsys):
    path, _ = _table(tmp_path)
    assert cli.main(["analyze", str(path), "--reference", "jbod", "--wide"]) == 0
    out = capsys.readouterr().out
    raid0 = next(line for line in out.splitlines() if line.split()[:1] == ["raid0"])
    assert raid0.split()[3:6] == ["1", "MiB", "700"] and "best MB/s" in out.splitlines()[0]  # the value alone, no interval
    assert raid0.split()[-3:] == ["—", "1", "fixed"]  # no verdict can be given; its one run, and why it stopped
    assert out.count("one run: no interval") == 1  # said once, under the table: every value above is of one run
    assert "no interval: every value above is of one run" in out and "700–700" not in out


def test_predictions_of_one_run_say_so_and_call_nothing_outside(tmp_path, capsys):
    path, frame = _table(tmp_path)
    assert cli.main(["analyze", str(path), "--predict"]) == 0
    out = capsys.readouterr().out
    jbod = next(line for line in out.splitlines() if line.split()[:1] == ["jbod"])
    assert "379*" in jbod and "379–379" not in out and "* one run: no interval" in out.splitlines()
    assert "3 point(s) of one run: no interval, so no verdict can be given" in out and "beyond the margin" not in out
    got = predict.score(predict.predict_results(frame), frame)
    assert set(got["agreement"]) == {"no interval"} and got["beyond_margin"].isna().all()
    said = predict.outside_sentences(got.assign(beyond_margin=True))  # were it called a miss: no interval shown
    assert all("(one run: no interval)" in line for line in said) and len(said) == 3


def test_two_runs_a_point_give_intervals_and_verdicts(tmp_path, capsys):
    path, frame = _table(tmp_path, runs=2)
    assert cli.main(["analyze", str(path), "--predict"]) == 0
    out = capsys.readouterr().out
    assert "one run" not in out, out
    assert "379 (377–382)" in out and "predicted MB/s" in out  # the single device's two runs, 379 and 379.4 MB/s
    shown = scoring.for_people(predict.score(predict.predict_results(frame), frame))
    assert shown["predicted_bw_bytes_lo"].notna().all() and "one run: no interval" not in set(shown["inside"])
