"""The memory guard's estimate against the memory each guarded entry point really
takes: run in a fresh process at a size where the allocation dominates, the peak
resident memory the call adds must lie within 1.5× of the estimate (and the
estimate not far above it)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

PROBE = pathlib.Path(__file__).with_name("_memory_probe.py")
sys.path.insert(0, str(PROBE.parent))
from _memory_probe import CASES  # noqa: E402

#: the estimate may exceed the measured peak by this factor at most (a looser bound
#: than 1.5× below: an estimate counts arrays that are not all alive at the same time)
MAX_OVER = 2.5


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB on Linux")
@pytest.mark.parametrize("case", sorted(CASES))
def test_guard_estimate_bounds_peak_memory(case):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(PROBE), case], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    measured, estimate = rec["measured"], rec["estimate"]
    assert measured > 50 * 2**20, rec          # the allocation dominates the noise
    assert estimate >= measured / 1.5, rec
    assert estimate <= MAX_OVER * measured, rec
