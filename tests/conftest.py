"""Shared test configuration: hypothesis profiles."""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=40, derandomize=True)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=400)
# CI (CI=true) replays the same examples on every run, so a red build always names a
# reproducible case; locally each run draws new ones.
_profile = "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "default"
settings.load_profile(os.environ.get("KERNELSELECT_HYPOTHESIS_PROFILE", _profile))

# tests/reference.py (the dense references) is imported as a plain module; only
# tests/ goes on sys.path, never src/ (the package is imported installed).
sys.path.insert(0, str(Path(__file__).resolve().parent))
