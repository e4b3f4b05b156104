"""make bench-predict's store (benchmarks/bench_predict.py, bench_predict_store.py): each run's measured and
predicted tables kept, the published table scored again from them alone, byte for byte; a prediction stated after
its layout's first run counts as none; intervals scored where the predictions carry them; misses held to each
point's own repeatability."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flashscale.measure.units import percent

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_predict  # noqa: E402
import bench_predict_store as store  # noqa: E402



def seed_case(tmp_path) -> store.Case:
    run = bench_predict.run(["seeds"], tmp_path / "work", tmp_path / "results")
    return store.cases(run)[0]


def test_a_kept_run_is_scored_again_to_the_same_bytes_from_its_stored_tables(tmp_path):
    run = bench_predict.run(["seeds"], tmp_path / "work", tmp_path / "results")
    kept = sorted(p.name for p in run.iterdir())
    assert kept == ["cases.json", "machine.json", "seed-000.measured.csv.gz", "seed-000.predicted.csv.gz",
                    "seed-003.measured.csv.gz", "seed-003.predicted.csv.gz", "table.md"]
    facts = (run / "machine.json").read_text()
    assert all(f'"{k}"' in facts for k in ("cpu", "kernel", "fio", "commit"))
    assert store.rescore(store.runs_under(run)) == (run / "table.md").read_text()
    scored = store.scored_runs([run])
    assert len(scored) == 6 and scored["stated"].eq("no times").all()  # the seeds' tables carry no run times
    assert scored.loc[scored["layout"] == "jbod", "error"].abs().max() == pytest.approx(0.02, abs=0.005)


def test_the_published_table_is_the_rescoring_of_the_kept_runs_byte_for_byte():
    published = store.published((ROOT / "docs" / "validation.md").read_text())
    assert published is not None, "docs/validation.md holds the bench-predict table between its markers"
    runs = store.runs_under(ROOT / "benchmarks" / "results")
    assert runs, "benchmarks/results keeps at least one run"
    assert store.rescore(runs) == published
    for run in runs:  # and each run's own table, as it was written when it was measured
        assert store.rescore([run]) == (run / store.TABLE_FILE).read_text()


def test_the_headline_is_the_median_of_every_kept_run_never_the_best(tmp_path):
    first = bench_predict.run(["seeds"], tmp_path / "work", tmp_path / "results")
    case = store.cases(first)[0]
    for factor in (0.8, 0.7):
        run = store.new_run(tmp_path / "results", {"cpu": "test"})
        store.keep(run, store.Case(case.name, True, case.measured.assign(bw_bytes=case.measured["bw_bytes"] * factor),
                                   case.predicted))
        (run / store.TABLE_FILE).write_text(store.rescore([run]))
    store.new_run(tmp_path / "results", {"cpu": "test"})  # a run not finished (no table): not kept
    runs = store.runs_under(tmp_path / "results")
    assert len(runs) == 3
    figures = [store.run_figure(store.scored_runs([r])) for r in runs]
    text = store.rescore(runs)
    median = sorted(figures)[1]
    assert min(figures) < median < max(figures)
    assert f"**{percent(median)}**" in text.splitlines()[0]
    assert f"(each run: {', '.join(percent(f) for f in figures)};" in text.splitlines()[0]


def timed(case: store.Case, stated: str, ran: str) -> store.Case:
    return store.Case(case.name, True, case.measured.assign(started_at=ran), case.predicted.assign(predicted_at=stated))


def test_a_prediction_stated_after_its_layouts_first_run_counts_as_none(tmp_path):
    case = seed_case(tmp_path)
    before = store.score(timed(case, "2026-11-27T10:00:00.000001+00:00", "2026-11-27T10:00:00.000002+00:00"))
    assert before["stated"].eq("before").all() and before["error"].notna().all()
    late = store.score(timed(case, "2026-11-27T10:00:00.000003+00:00", "2026-11-27T10:00:00.000002+00:00"))
    assert late["stated"].eq("after").all()
    assert late["error"].isna().all() and late["predicted_bw_bytes"].isna().all()
    assert late["measured_bw_bytes"].notna().all()  # what was measured is kept, only the prediction is refused
    assert "not stated before" in late["refused"].iloc[0]
    # one layout late, the other before: only the late one is none
    mixed = case.predicted.assign(predicted_at=np.where(case.predicted["layout"] == "jbod",
                                                        "2026-11-27T10:00:03+00:00", "2026-11-27T10:00:01+00:00"))
    scored = store.score(store.Case(case.name, True, case.measured.assign(started_at="2026-11-27T10:00:02+00:00"),
                                    mixed))
    assert set(scored.loc[scored["stated"] == "after", "layout"]) == {"jbod"}
    assert scored.loc[scored["layout"] == "md-raid0", "error"].notna().all()
    run = store.new_run(tmp_path / "late", {"cpu": "test"})
    store.keep(run, store.Case(case.name, True, case.measured.assign(started_at="2026-11-27T10:00:02+00:00"), mixed))
    text = store.rescore([run])
    assert "2 point(s) stated after its first run: none" in text
    assert "jbod: no prediction: the prediction of jbod was stated at 2026-11-27T10:00:03+00:00" in text


def test_intervals_are_scored_where_the_predictions_carry_them_and_said_absent_where_not(tmp_path):
    case = seed_case(tmp_path)
    assert store.score(case)["interval_meets"].notna().all()  # the model states its interval now
    before = case.predicted.drop(columns=["predicted_lo_bw_bytes", "predicted_hi_bw_bytes", "predicted_unknown"],
                                 errors="ignore")  # a prediction stored before the model stated one
    assert store.score(store.Case(case.name, True, case.measured, before))["interval_meets"].isna().all()
    value = case.measured.set_index(["layout", "rw"])["bw_bytes"]
    keys = list(zip(case.predicted["layout"], case.predicted["rw"]))
    measured = np.array([value[k] for k in keys], dtype=float)
    lo = measured * np.array([0.9, 1.1, np.nan, 0.5])  # the third's lower end open
    hi = measured * np.array([1.2, 1.3, 1.05, np.nan])  # the fourth's upper end open
    said = case.predicted.assign(predicted_lo_bw_bytes=lo, predicted_hi_bw_bytes=hi,
                                 predicted_unknown=np.where(case.predicted["layout"] == "md-raid0", "the stripe unit",
                                                            ""))
    scored = store.score(store.Case(case.name, True, case.measured, said)).set_index(["layout", "rw"])
    meets = [bool(scored.loc[k, "interval_meets"]) for k in keys]
    assert meets == [True, False, True, True]
    width = [scored.loc[k, "predicted_width"] for k in keys]
    assert width[0] == pytest.approx(1.2 / 0.9, rel=1e-9) and np.isinf(width[2]) and np.isinf(width[3])
    run = store.new_run(tmp_path / "intervals", {"cpu": "test"})
    store.keep(run, store.Case(case.name, True, case.measured, said))
    text = store.rescore([run])
    assert "3 of 4 (widest open)" in text
    assert "md-raid0 read on 12, 66 jobs, iodepth 1" in text and "the interval wide from: the stripe unit" in text


def test_a_miss_within_the_points_own_repeatability_is_said_to_be_noise(tmp_path):
    case = seed_case(tmp_path)
    point = case.measured[(case.measured["layout"] == "md-raid0") & (case.measured["rw"] == "read")]
    again = pd.concat([point.assign(rep=1, bw_bytes=point["bw_bytes"] * 0.75), case.measured], ignore_index=True)
    scored = store.score(store.Case(case.name, True, again, case.predicted))
    row = scored[(scored["layout"] == "md-raid0") & (scored["rw"] == "read")].iloc[0]
    assert row["noise"] == pytest.approx(0.25 / 0.875, rel=1e-9)
    assert abs(row["error"]) > store.MISS and abs(row["error"]) <= row["noise"]
    run = store.new_run(tmp_path / "noise", {"cpu": "test"})
    store.keep(run, store.Case(case.name, True, again, case.predicted))
    text = store.rescore([run])
    assert "md-raid0 read on 12, 66 jobs, iodepth 1" in text and "within the machine's noise" in text
    assert "| seed 000 | md-raid0 | 12 | read | 1 | " in text and "| 1 / 0 / 0 |" in text


def test_publishing_writes_the_table_between_the_markers_and_leaves_the_rest(tmp_path):
    page = tmp_path / "validation.md"
    page.write_text(f"before\n{store.BEGIN}old table\n{store.END}\nafter\n")
    store.publish(page, "| new |\n")
    assert page.read_text() == f"before\n{store.BEGIN}| new |\n{store.END}\nafter\n"
    assert store.published(page.read_text()) == "| new |\n"
    page.write_text("no markers\n")
    with pytest.raises(ValueError, match="no bench-predict table's markers"):
        store.publish(page, "| new |\n")


def test_the_null_blk_devices_tags_and_latency_are_measured_from_its_runs_not_handed_over():
    import vm_guest_predict

    def rows(tags: int, depths=(1, 2, 4, 8, 16, 32)):
        return [{"iodepth": d, "bw_bytes": min(d, tags) * 4096 / 0.01 * (1 + 0.01 * rep), "rep": rep,
                 "clat_mean_ns": 1e7 * max(1.0, d / tags)} for rep in (0, 1) for d in depths]

    for tags in (4, 8, 16):
        device = vm_guest_predict.measured_device(rows(tags))
        assert device["tags"] == tags and device["latency_ns"] == pytest.approx(1e7, rel=1e-9)
        assert "at least" not in device["how"]
    rising = vm_guest_predict.measured_device(rows(64))  # never saturated: a lower bound, said
    assert rising["tags"] == 32 and "at least" in rising["how"]
