"""The command's output in a pipe that closes early (``| head -1``): it ends quietly with status 0, no traceback."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

MiB = 1048576


def test_analyze_into_head_ends_quietly_with_status_0(tmp_path: Path):
    # enough rows that the output outgrows the pipe's buffer, so the write after head has gone fails (EPIPE)
    rows = [{"layout": "single" if d == 1 else f"l{d}", "devices": d, "rw": "read", "bs": MiB * b, "numjobs": j,
             "iodepth": 1, "rep": r, "bw_bytes": 1e8 * d * (1 + r / 100)}
            for d in range(1, 400) for b in (1, 2) for j in (1, 2) for r in (0, 1)]
    frame = pd.DataFrame(rows)
    frame.loc[frame["devices"] == 2, "layout"] = "jbod"
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    flashscale = [sys.executable, "-m", "flashscale.cli", "analyze", str(path), "--reference", "jbod", "--by", "bs",
                  "--format", "csv"]
    done = subprocess.run(["bash", "-c", 'set -o pipefail; "$@" | head -1', "pipe", *flashscale],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("layout,devices,rw,bs,")
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    full = subprocess.run(flashscale, capture_output=True, text=True, timeout=120)
    assert len(full.stdout) > 2**16  # the output was larger than a pipe holds: head really closed it early
