"""Every numeric campaign parameter has an upper bound (issue 52, left over): a huge value of the right type is
refused where it enters, naming the value and the bound, before anything is priced, dry-run or built. Real
studies stay inside (a 24 h run, a 100 TB device, a 400 Gb/s link). The numeric parameters are found by probing the
schema, so a new one without a bound fails here."""
from __future__ import annotations

import math
from pathlib import Path

import papermill
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import ValidationError

from flashscale import cli
from flashscale.campaigns import campaign, cluster, parameters, rules
from flashscale.errors import ConfigError
from flashscale.notebooks import estimate

ROOT = Path(__file__).resolve().parents[1]
HUGE = 10**30  # past every bound (the largest: parameters.MAX_BYTES, 2**50)
PARTS = {"campaign": campaign.PARTS, "cluster": cluster.PARTS, "notebook": campaign.PARTS}
# pydantic's bound; TAX_MARGIN's, CAP_SCALE's; a notebook's own number's (rules.NOTEBOOK_NUMBERS)
BOUND_SAID = ("less than or equal to", "less than 1", "[0, 1)", "(0, 1]", " to ")


def numeric(parts) -> dict[str, bool]:
    """Each parameter of ``parts`` that takes a number, mapped to whether it takes a list of them."""
    model, found = parameters.model(parts), {}
    for name in model.model_fields:
        for probe in (8, 0.5, 2**30, [8], [0.5], [2**30]):
            try:
                model.model_validate({name: probe})
            except ValidationError:
                continue
            found[name] = isinstance(probe, list)
            break
    return found


NUMERIC = {(kind, name): listed for kind, parts in PARTS.items() if kind != "notebook"
           for name, listed in numeric(parts).items()}
NUMERIC.update({("notebook", name): listed for name, (_, _, listed) in rules.NOTEBOOK_NUMBERS.items()})


def test_the_probe_finds_the_numbers_the_brief_names():
    names = {name for _, name in NUMERIC}
    assert {"RUNTIME_S", "RAMP_S", "BS", "FILE_SIZE", "DEVICE_SIZE", "REPETITIONS", "MAX_REPETITIONS", "CAP_READ_BPS",
            "CAP_WRITE_BPS", "LINK_BPS", "IODEPTH", "NUMJOBS", "HOSTS", "CLOCK_TOLERANCE_S"} <= names
    assert len(names) >= 25 and {"JOB_FILE_REPETITIONS", "PGBENCH_DURATION_S", "NRFILES"} <= names


@pytest.mark.parametrize("kind, name", sorted(NUMERIC), ids=lambda v: str(v))
def test_every_numeric_parameter_refuses_a_huge_value_naming_it_and_its_bound(kind, name):
    value = [HUGE] if NUMERIC[(kind, name)] else HUGE
    with pytest.raises(ConfigError) as caught:
        parameters.check({name: value}, PARTS[kind])
    said = str(caught.value)
    assert f"{name}={value!r}" in said and any(bound in said for bound in BOUND_SAID), said


@pytest.mark.parametrize("kind, name", sorted(NUMERIC), ids=lambda v: str(v))
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -1, -(2**70)], ids=repr)
def test_every_numeric_parameter_refuses_nan_infinity_and_negatives(kind, name, value):
    given = [value] if NUMERIC[(kind, name)] else value
    with pytest.raises(ConfigError, match=f"{name}="):
        parameters.check({name: given}, PARTS[kind])


REAL_STUDY = {"RUNTIME_S": 86400, "RAMP_S": 3600, "DEVICE_SIZE": 100 * 10**12, "FILE_SIZE": 100 * 10**12,
              "CAP_READ_BPS": 64 * 10**9, "CAP_WRITE_BPS": 64 * 10**9, "BS": [4096, 2**26], "IODEPTH": [1, 4096],
              "NUMJOBS": [1, 256], "REPETITIONS": 30, "SS_DUR_S": 86400, "PRECONDITION_ROUNDS_MAX": 25,
              "CHUNK_BYTES": 2**20}


def test_a_real_study_s_numbers_are_taken_and_priced():
    """A 24 h run on 100 TB devices at PCIe 5 rates passes the check and is priced in finite hours."""
    parameters.check(REAL_STUDY, campaign.PARTS)
    parameters.check({"HOSTS": [1, 64], "LINK_BPS": 50 * 10**9, "CLOCK_TOLERANCE_S": 60.0,  # 400 Gb/s
                      "RUNTIME_S": 86400}, cluster.PARTS)
    found = estimate.of_notebook({**REAL_STUDY, "RW": ["read"], "LAYOUTS": ["single"]})
    assert 0 < found.device_s[1] < 1e9 and math.isfinite(found.wall_s[1])


def run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("how", [["--estimate"], ["--dry-run"], ["--estimate", "--budget", "1h"],
                                 ["--dry-run", "--format", "json"]])
def test_the_issue_s_case_is_refused_not_priced(capsys, how):
    """``RUNTIME_S=1e20`` priced about 2e18 h before: now one line naming the value and the bound, nothing on stdout."""
    status, out, err = run(capsys, ROOT / "runners" / "quickstart.yaml", "-p", f"RUNTIME_S={10**20}", *how)
    assert status == 1 and out == "", (status, out)
    assert err.startswith("flashscale run: error: ") and "Traceback" not in err
    assert f"RUNTIME_S={10**20}" in err and str(parameters.MAX_SECONDS) in err


# Hostile values through the command line: each numeric parameter given to a campaign whose notebook declares it.

def _runner_of(name: str) -> Path | None:
    for file in ("quickstart", "cluster", "study", "vm", "jobfile", "applications"):
        path = ROOT / "runners" / f"{file}.yaml"
        first = yaml.safe_load(path.read_text())["notebooks"][0]
        if name in papermill.inspect_notebook(str(ROOT / "notebooks" / f"{first}.ipynb")):
            return path
    return None


RUNNER = {name: found for _, name in NUMERIC for found in [_runner_of(name)] if found is not None}
LISTED = {name: listed for (_, name), listed in NUMERIC.items()}
huge = st.one_of(st.integers(min_value=2**51, max_value=2**200), st.floats(min_value=1e16, allow_infinity=True))
bad = st.one_of(huge, st.integers(max_value=-1), st.floats(max_value=-1e-9), st.just(math.nan))


def as_yaml(value) -> str:
    """``value`` as ``-p`` reads it (YAML: a float keeps its dot, nan is .nan)."""
    said = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return said.removesuffix("...").strip()


def test_most_numeric_parameters_can_be_given_to_a_campaign():
    assert len(RUNNER) >= 30 and {"RUNTIME_S", "LINK_BPS", "HOSTS", "SS_DUR_S", "JOB_FILE_REPETITIONS",
                                  "PGBENCH_DURATION_S", "BASELINE_BS"} <= set(RUNNER)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(RUNNER)), bad, st.booleans(), st.sampled_from(["--estimate", "--dry-run"]))
def test_a_hostile_number_is_never_a_traceback_or_a_price(capsys, name, value, wrap, how):
    given_value = [value] if wrap or LISTED[name] else value
    text = as_yaml(given_value)
    read = yaml.safe_load(text)
    assert repr(read) == repr(given_value)  # -p reads what was drawn (nan compared by its repr)
    status, out, err = run(capsys, RUNNER[name], "-p", f"{name}={text}", how)
    assert status == 1 and out == "", (name, text, status, out)
    assert "Traceback" not in err and f"{name}=" in err, err
