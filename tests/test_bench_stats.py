"""make bench-stats' own logic (benchmarks/bench_stats.py): a setting's rates are what its verdicts say, a rate
above its stated one by more than 3 Monte Carlo errors fails the bench, and the results are kept. The bench's
Monte Carlo itself is make bench-stats; the small versions of its checks are the tests of each procedure
(test_significance*.py, test_family.py, test_builds.py)."""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_stats  # noqa: E402


def test_a_setting_s_rates_are_its_verdicts_counted():
    found = bench_stats.run(("fixed", {"n": 3, "m": 3, "spreads": (0.02, 0.02), "margin": 0.02}, 200, 1))
    for edge in bench_stats.EDGES:
        codes = found["verdicts"][edge]
        assert len(codes) == 200 and set(codes) <= set(bench_stats.CODE.values())
    wrong = max(sum(c in ("e", "t" if edge == "lower" else "g") for c in found["verdicts"][edge]) / 200
                for edge in bench_stats.EDGES)
    assert found["fixed"] == pytest.approx(wrong)
    sequential = bench_stats.run(("sequential", {"most": 3, "m": 3, "spreads": (0.02, 0.02), "margin": 0.1,
                                                 "edge": "lower"}, 200, 1))
    assert len(sequential["runs"]) == 200 and set(sequential["runs"]) <= {2, 3}
    shared = bench_stats.run(("shared", {"most": 5, "spreads": (0.02, 0.02), "margin": 0.02, "edge": "lower",
                                         "precision": None}, 200, 1))
    assert len(shared["verdicts"]) == 200 and shared["shared"] == pytest.approx(
        sum(c in ("e", "t") for c in shared["verdicts"]) / 200)
    assert all(2 <= n <= 5 and 2 <= m <= 5 and min(n, m) >= 2 for n, m in shared["runs"])


def test_a_rate_above_its_stated_one_by_more_than_three_errors_fails():
    error = bench_stats.error(0.05, 2000)  # 0.49 points
    at = {"procedure": "interval", "setting": {}, "interval": 0.05 + 2.9 * error}
    over = {"procedure": "interval", "setting": {}, "interval": 0.05 + 3.1 * error}
    assert bench_stats.held(at, 2000)[0][-1] and not bench_stats.held(over, 2000)[0][-1]
    assert [row["over"] for row in bench_stats.table([at, over], 2000)] == [1]


def test_the_bench_keeps_every_setting_and_fails_only_where_a_rate_is_exceeded(tmp_path, capsys):
    assert bench_stats.main(["--draws", "100", "--only", "family", "--jobs", "1", "--out", str(tmp_path)]) == 0
    kept, = tmp_path.glob("tax-*.json.gz")
    with gzip.open(kept, "rt") as f:
        found = json.load(f)
    assert found["draws"] == 100 and len(found["settings"]) == 6
    assert "| family | 6 | 2.5% |" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        bench_stats.main(["--draws", "10"])  # too few for a rate near 5%: refused, naming it
