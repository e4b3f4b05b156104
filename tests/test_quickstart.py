"""The quickstart notebook and campaign, executed by papermill with small parameters, checked against the
emulated truth; and the campaign runner's refusals, before anything runs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashscale.measure import campaign_folder
from flashscale import cli
from flashscale.notebooks import execute
from flashscale.analysis.prediction import scoring
from flashscale.measure import results
from flashscale.publish import report
from flashscale.system import provenance

from conftest import run_notebook
from flashscale.measure import truth

ROOT = Path(__file__).resolve().parents[1]
# 4 devices as the quickstart, fewer points: 1 and 4 jobs, 2 repetitions (the least that gives a spread), 3 s runs
# without a ramp, not 2 s after one (the same 3 s a run): a capped run more than 2% above its truth, as the
# throttle's first slice lets through, gives no rate (measure.truth), and reads after a ramp came out up to 2% above
SMALL = dict(DEVICES=4, NUMJOBS=[1, 4], REPETITIONS=2, RUNTIME_S=3, RAMP_S=0, FILE_SIZE=32 * 2**20, DEVICE_SIZE=2**30,
             CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000, PROGRESS=False)


def campaign_file(tmp_path: Path, parameters: dict, name: str = "qs") -> Path:
    import yaml

    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"campaign": name, "notebooks": ["quickstart"], "parameters": parameters}))
    return path


def run_quickstart(tmp_path: Path, **parameters) -> tuple[Path, dict]:
    """``flashscale run`` of the quickstart as campaign ``qs`` (``conftest.run_notebook``: the campaign file lives
    outside the checkout, its notebooks are the checkout's); returns the HTML and the recorded numbers."""
    out, numbers = run_notebook(tmp_path, "quickstart", "qs", {**SMALL, **parameters})
    return out / "quickstart.html", numbers


@pytest.mark.root
@pytest.mark.notebook
def test_quickstart_on_the_emulated_array_finds_the_known_answer(tmp_path):
    html, numbers = run_quickstart(tmp_path)
    assert numbers["backend"] == "loop" and numbers["notes"] == []
    assert numbers["baseline_bw_bytes"]["read"] == pytest.approx(100e6, rel=0.1)
    assert numbers["baseline_bw_bytes"]["write"] == pytest.approx(100e6, rel=0.1)
    assert numbers["above_truth"] == 0 and numbers["too_short"] == 0  # every run within its known cap, all timed
    assert set(numbers["precondition"]) == {"single", "jbod", "btrfs-raid0"}
    for rw in ("read", "write"):
        assert 0.95 <= numbers["jbod_efficiency"][f"4/{rw}"] <= 1.05
        jbod = numbers["layouts"][f"jbod/4/{rw}"]
        assert jbod["efficiency"] == numbers["jbod_efficiency"][f"4/{rw}"] and jbod["tax"] == 0
        assert 0 < jbod["efficiency_lo"] <= jbod["efficiency"] <= jbod["efficiency_hi"] and jbod["best_reps"] == 2
        raid0 = numbers["layouts"][f"btrfs-raid0/4/{rw}"]
        # the same truth as jbod's (4 x the cap): never a gain beyond it; reads never a tax either. btrfs's writes
        # wait now and then on its own commit: 1 run in 10 of 4 jobs wrote 330 MB/s, not 400, with the CPUs held
        # out of deep idle or not alike (10 alternating pairs), so a write's best may come out a few percent short,
        # and that is btrfs's, not noise of the test. Equivalent, or undecided with the runs to add (two runs a
        # side give t = 4.3), never a tax claimed on two runs. Never a gain beyond what the throttle lets through
        # in a run this short (truth.tolerance, 5% at 2 s): btrfs-raid0 read 407.7 MB/s in both runs of
        # one, jbod 399.2, a "gain" of 2.1%
        slack = truth.tolerance(SMALL["RUNTIME_S"])
        assert raid0["tax_margin"] == pytest.approx(0.02) and raid0["tax"] > -slack
        assert raid0["tax"] < (0.02 if rw == "read" else 0.2)
        assert raid0["tax_verdict"] in ("equivalent", "inconclusive")
        if raid0["tax_verdict"] == "inconclusive":
            # the runs to add, or None where no number up to MAX_REPS would decide (significance.reps_to_decide)
            needed = raid0["tax_reps_needed"]
            assert raid0["tax_lo"] < 0.02 and raid0["tax_hi"] > -0.02 and (needed is None or needed > 2)
        # seed 000's question, answered for each layout: one device needs one job; jbod's one job reaches one device
        # of four, and 1 -> 4 jobs is a step still rising, so no saturation is claimed within 1 and 4 jobs
        jbod_saturation, single_saturation = (numbers["saturation"][f"{key}/{rw}"] for key in ("jbod/4", "single/1"))
        assert not jbod_saturation["reached"] and jbod_saturation["saturating_numjobs"] is None
        assert jbod_saturation["one_job_fraction"] == pytest.approx(0.25, abs=0.03)
        assert single_saturation["saturating_numjobs"] == 1 and single_saturation["one_job_fraction"] > 0.95
    text = html.read_text()
    assert "jbod on 4 devices, read: 95% of its best not reached within the measured range (still rising at 4 " \
           "jobs" in text and "single on 1 device, read: one job is enough" in text
    assert "btrfs-raid0 costs" not in text and "btrfs-raid0 is" not in text
    assert any(f"btrfs-raid0 {said} jbod for read" in text for said in ("performs as", "against"))
    assert text.count("<img") >= 3 and "Conclusions" in text
    assert "Every run within its known cap: all 24 run(s)" in text and "the precondition wrote" in text
    assert "CampaignSpec" not in text  # code cells are hidden in the report
    # predicted before measuring, scored after: one table, one figure, the tax re-read; the record's errors are the
    # predictions' against the table; the devices' term is the known truth (the cpu term binds or not as this
    # machine is busy: cpu_busy_cores is the whole machine's)
    predicted = text[text.index("Predicted before measuring"):text.index("Conclusions")]
    assert predicted.count("<table") == 1 and predicted.count("<img") == 1 and "binding limit" in predicted
    assert "against the prediction" in predicted and "jbod on 4 devices, read:" in predicted
    stated = campaign_folder.read_predictions(tmp_path / "data" / "qs")
    got = scoring.against(stated, results.load(tmp_path / "data" / "qs"), 0.02)
    assert numbers["prediction_error"] == pytest.approx(scoring.largest_errors(got))
    assert set(numbers["prediction_error"]) == {f"{layout}/{rw}" for layout in ("jbod", "btrfs-raid0")
                                                for rw in ("read", "write")}
    jbod = stated[stated["layout"] == "jbod"].set_index(["rw", "numjobs"])["devices_limit_bw_bytes"]
    assert jbod.to_dict() == pytest.approx({(rw, n): n * 100e6 for rw in ("read", "write") for n in (1, 4)}, rel=0.1)
    # harness checks, not evidence of the model's accuracy: each device is held at its cap, so N busy devices x the
    # cap is the truth by construction, and a prediction near it checks the cap, the curve and the sum (restored
    # from before d63959b, now that a capped device gives no CPU term: the devices bind)
    assert numbers["prediction_error"]["jbod/read"] < 0.05 and numbers["prediction_error"]["jbod/write"] < 0.05
    assert numbers["prediction_error"]["btrfs-raid0/read"] < 0.05
    assert "jbod on 4 devices, read: within 2%" in predicted
    outside = text[text.index("Conclusions"):].count("Beyond the margin of its prediction:")
    assert outside == numbers["predictions_outside"] == int(got["beyond_margin"].sum())
    # jbod at 1 job is the single device again, minutes later: at the cap, the machine repeats itself closely
    assert set(numbers["repeatability"]) == {"jbod/read", "jbod/write"}
    assert max(map(abs, numbers["repeatability"].values())) < 0.05
    assert "jbod at 1 job keeps one device busy, as the single device was before it: read" in predicted
    made_by(html, "loop")
    # every run's env.json keeps the software that measured it, the campaign's
    software = json.loads((tmp_path / "data" / "qs" / "campaign.json").read_text())["environment"]["software"]
    envs = sorted((tmp_path / "data" / "qs" / "raw").glob("*/*/rep*/env.json"))
    assert envs and all(json.loads(env.read_text())["software"] == software for env in envs)


def made_by(html: Path, backend: str) -> None:
    """The report ends with how it was made: the campaign's software and machine, and the installed flashscale and
    pandas that analysed it, the same as measured it."""
    from importlib.metadata import version

    text = html.read_text()
    assert text.count("How this was made") == 1
    made = text[text.index("How this was made"):]
    assert "<img" not in made and "<table" not in made  # the report's last section
    assert "<code>qs</code>" in made and f"the {backend} backend" in made
    assert f"flashscale {version('flashscale')} (" in made and f"pandas {version('pandas')}" in made
    assert provenance.lock_words(provenance.software()) in made  # requirements.lock and its hash
    assert "Analysed with the same software as measured." in made


@pytest.mark.notebook
def test_quickstart_on_plain_directories_says_so(tmp_path):
    html, numbers = run_quickstart(tmp_path, EMULATION="directory", RW=["read"], NUMJOBS=[2], RUNTIME_S=1,
                                   RAMP_S=0, LAYOUTS=["single", "jbod"])
    assert numbers["backend"] == "directory"
    assert any("plain directories" in note for note in numbers["notes"])
    assert "plain directories" in html.read_text()
    # jbod was predicted from single before it was built, scored in one table, one figure; the record says the error
    text = html.read_text()
    predicted = text[text.index("Predicted before measuring"):text.index("Conclusions")]
    assert predicted.count("<table") == 1 and predicted.count("<img") == 1 and "jbod" in predicted
    assert list(numbers["prediction_error"]) == ["jbod/read"] and numbers["prediction_error"]["jbod/read"] >= 0
    made_by(html, "directory")


@pytest.mark.notebook
def test_a_tax_margin_given_in_percent_is_refused_before_anything_is_measured(tmp_path, capsys):
    campaign = campaign_file(tmp_path, {**SMALL, "DATA_DIR": str(tmp_path / "data"), "TAX_MARGIN": 2})
    assert cli.main(["run", str(campaign), "--reports", str(tmp_path / "reports")]) != 0
    assert "tax margin 2 (TAX_MARGIN, --margin) must be a fraction in [0, 1)" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()  # nothing measured, not even a campaign folder


def test_an_undeclared_parameter_is_refused_before_anything_runs(tmp_path, capsys):
    campaign = campaign_file(tmp_path, {"DEVICE": 4})
    assert cli.main(["run", str(campaign), "--reports", str(tmp_path / "reports")]) == 1
    assert "has no parameter 'DEVICE' (did you mean 'DEVICES'?)" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("text,named", [
    ("campaign: qs\nnotebooks: [quickstart]\nparamters: {}\n", "unknown key 'paramters' (did you mean 'parameters'?)"),
    ("campaign: ../qs\nnotebooks: [quickstart]\n", "campaign name '../qs' must be a plain"),
    ("campaign: qs\nnotebooks: quickstart\n", "notebooks='quickstart'"),
    ("campaign: qs\nnotebooks: [nosuch]\n", "notebook 'nosuch' not found"),
])
def test_bad_campaign_files_are_named(tmp_path, capsys, text, named):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    assert cli.main(["run", str(path)]) == 1
    assert named in capsys.readouterr().err


def test_overrides_must_be_name_equals_value(capsys):
    assert cli.main(["run", "runners/quickstart.yaml", "-p", "DEVICES"]) == 1
    assert "'DEVICES' must look like NAME=VALUE" in capsys.readouterr().err
    assert execute.parse_overrides(["NUMJOBS=[1, 2]", "EMULATION=directory"]) == {"NUMJOBS": [1, 2],
                                                                                 "EMULATION": "directory"}


def test_the_shipped_campaign_names_only_declared_parameters():
    spec = execute.load_campaign(ROOT / "runners" / "quickstart.yaml")
    execute.check_parameters(ROOT / "notebooks" / "quickstart.ipynb", {**spec["parameters"], "CAMPAIGN": "x"})


def test_a_campaign_gives_its_name_only_to_notebooks_that_declare_campaign(tmp_path):
    """reference_studies touches no device and has no CAMPAIGN parameter; its campaign file must still run."""
    published = execute.run_campaign(ROOT / "runners" / "reference.yaml", reports_dir=tmp_path)
    assert [p.name for p in published] == ["reference_studies.html"]
    numbers = report.read_record(tmp_path / "reference" / "reference_studies.ipynb")
    assert numbers  # the notebook recorded what it recomputed
    assert 'href="reference_studies.html"' in (tmp_path / "reference" / "index.html").read_text()
