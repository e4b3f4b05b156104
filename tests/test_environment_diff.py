"""What differs between two campaigns' machines and environments (``analysis.environment_diff``), listed before
any change: the caps of an emulated array and the kernel first, what differs by design (run id, name, notes) never,
a fact one side lacks said as missing on that side."""
from __future__ import annotations

import pandas as pd

from flashscale.analysis import environment_diff as ed


def record(cap_scale, kernel="6.1.0", run_id="20261207T100000Z", name="quickstart", **environment):
    return {"run_id": run_id, "notes": ["started"],
            "spec": {"name": name, "data_dir": "data/campaigns", "tax_margin": 0.02,
                     "array": {"devices": 4, "read_bps": 400_000_000, "cap_scale": cap_scale},
                     "options": {"chunk_bytes": 524288}},
            "environment": {"hostname": "bench1", "kernel": kernel, "fio": "fio-3.33", "backend": "loop",
                            "software": {"commit": "96bb5720ab", "dirty": False}, **environment}}


def test_a_device_capped_lower_is_listed_first_and_what_differs_by_design_never():
    a = ed.facts(record([1, 1, 1, 1]))
    b = ed.facts(record([1, 0.95, 1, 1], run_id="20261208T100000Z", name="quickstart-capped"))
    differs = ed.differences(a, b)
    assert differs.to_dict("records") == [{"what": "spec.array.cap_scale", "a": "[1, 1, 1, 1]",
                                           "b": "[1, 0.95, 1, 1]"}]


def test_the_likeliest_causes_come_first_and_a_missing_fact_is_said():
    rows = pd.DataFrame({"fio_version": ["fio-3.33", "fio-3.36"], "chunk_bytes": [524288, 524288]})
    a = ed.facts(record([1, 1]), rows)
    b = ed.facts(record([1, 1], kernel="6.8.0", governor="powersave"),
                 rows.assign(chunk_bytes=65536))
    differs = ed.differences(a, b)
    assert list(differs["what"]) == ["environment.kernel", "environment.governor", "rows.chunk_bytes"]
    assert differs.iloc[1].to_dict() == {"what": "environment.governor", "a": ed.MISSING, "b": "powersave"}
    assert a["rows.fio_version"] == "fio-3.33 | fio-3.36"


def test_an_archive_query_s_campaigns_are_one_side():
    sides = [ed.facts(record([1, 1])), ed.facts(record([1, 1], kernel="6.8.0")), ed.facts({})]
    together = ed.combined(sides)
    assert together["environment.kernel"] == f"{ed.MISSING} | 6.1.0 | 6.8.0"
    assert ed.combined(sides[:1]) == sides[0]
    assert ed.differences(ed.facts(None), ed.facts(None)).empty
