"""Property tests: whatever a campaign file, a set of notebook parameters or a fio JSON file holds, flashscale
answers with a value or one of its own typed errors, never a traceback of Python's; bad input touches no device."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale.campaigns import campaign, parameters
from flashscale.notebooks import execute
from flashscale.cli import main as cli_main
from flashscale.errors import ConfigError, FioError, FlashscaleError
from flashscale.measure import fio_output

from conftest import loop_devices_backed_under, sha256

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_OUTPUTS = sorted(p for p in GOLDEN.glob("*.json") if p.stem not in ("no_json",))
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**62, 2**62), st.floats(allow_nan=True),
                    st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8),
                                                                                           inner, max_size=4),
                      max_leaves=12)
names = st.sampled_from(sorted(parameters.SCHEMA)) | st.text(min_size=1, max_size=12)


@FAST
@given(st.dictionaries(names, values, max_size=6))
def test_any_parameters_give_a_spec_or_a_config_error(given_parameters):
    try:
        spec = campaign.CampaignSpec.from_parameters(**given_parameters)
    except ConfigError as exc:
        assert str(exc)
        return
    assert isinstance(spec, campaign.CampaignSpec)


@FAST
@given(st.sampled_from(sorted(parameters.SCHEMA)), values)
def test_a_refused_parameter_is_named_in_the_message(name, value):
    words = {n.lower() for n in parameters.SCHEMA} | {f for _, f in parameters.PARAMETERS.values()} | {"campaign"}
    try:
        campaign.CampaignSpec.from_parameters(**{name: value})
    except ConfigError as exc:  # the parameter itself, or the one a rule between two of them needs (SS: SS_DUR_S)
        message = str(exc).lower()
        assert name.lower() in message or any(word in message for word in words), message


campaign_files = st.one_of(
    st.text(max_size=200),
    values.map(lambda v: yaml.safe_dump(v)),
    st.fixed_dictionaries({"campaign": values, "notebooks": values},
                          optional={"parameters": st.dictionaries(names, values, max_size=4),
                                    "description": values, "notebook_parameters": values,
                                    "notebook": values}).map(yaml.safe_dump),
)


@FAST
@given(campaign_files)
def test_any_campaign_file_gives_a_campaign_or_a_config_error(tmp_path, text):
    path = tmp_path / "fuzz.yaml"
    path.write_text(text)
    try:
        loaded = execute.load_campaign(path)
    except ConfigError as exc:
        assert str(path) in str(exc) or "does not exist" in str(exc)
        return
    assert isinstance(loaded["notebooks"], list) and loaded["campaign"]


def mutations(data: dict) -> st.SearchStrategy:
    """fio's JSON with one field removed, retyped or replaced, at any depth along the fields parse reads."""
    paths = [("jobs",), ("jobs", 0), ("jobs", 0, "read"), ("jobs", 0, "write"), ("jobs", 0, "read", "bw_bytes"),
             ("jobs", 0, "write", "io_bytes"), ("jobs", 0, "read", "clat_ns"), ("jobs", 0, "read", "clat_ns", "mean"),
             ("jobs", 0, "read", "lat_ns"), ("jobs", 0, "read", "runtime"), ("jobs", 0, "error"), ("fio version",)]
    return st.tuples(st.sampled_from(paths), st.sampled_from(["drop", "set"]), values)


def mutate(data: dict, path: tuple, how: str, value) -> dict:
    data = json.loads(json.dumps(data))
    holder = data
    for key in path[:-1]:
        holder = holder[key]
    if how == "drop":
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return data


def read_fio(text: str) -> dict | None:
    """What the recorder does with fio's output: load, validate, parse; a typed error or a row."""
    data = fio_output.load_output(text, source="fuzz/fio.json")
    fio_output.validate(data, source="fuzz/fio.json")
    return fio_output.parse(data, source="fuzz/fio.json")


@FAST
@given(st.sampled_from(GOLDEN_OUTPUTS), st.data())
def test_fio_json_damaged_in_any_way_gives_a_row_or_a_fio_error_naming_the_file(golden, data):
    text = golden.read_text()
    original = fio_output.load_output(text)
    original.pop("_preamble")
    if "jobs" not in original or not original["jobs"]:
        return
    path, how, value = data.draw(mutations(original))
    damaged = [text[:data.draw(st.integers(0, len(text)))], json.dumps(mutate(original, path, how, value))]
    for candidate in damaged:
        try:
            row = read_fio(candidate)
        except FioError as exc:
            assert "fuzz/fio.json" in str(exc)
            continue
        assert set(row) >= {"bw_bytes", "iops", "runtime_s"}


@FAST
@given(st.text(max_size=300) | values.map(json.dumps))
def test_any_text_as_fio_output_gives_a_row_or_a_fio_error(text):
    try:
        read_fio(text)
    except FioError as exc:
        assert "fuzz/fio.json" in str(exc)


@pytest.mark.root
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(parameters.SCHEMA)), values)
def test_flashscale_run_of_a_bad_campaign_file_touches_no_device(tmp_path, foreign_loop, capsys, name, value):
    """A campaign file made invalid by one bad parameter: exit status 1, one line naming it, no device touched."""
    spec = {"campaign": "fuzz", "notebooks": ["quickstart"],
            "parameters": {"DEVICES": 1, "BACKING_DIR": str(tmp_path), name: value}}
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(spec))
    try:
        parameters.check(spec["parameters"], campaign.PARTS)
        campaign.CampaignSpec.from_parameters(**spec["parameters"])
        return  # a valid file: it would measure; not this test's business
    except (ConfigError, FlashscaleError):
        pass
    assert cli_main(["run", str(path), "--reports", str(tmp_path / "reports")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("flashscale run: error:") and "Traceback" not in err
    assert loop_devices_backed_under(tmp_path) == []
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]
