"""The randomised circulant criteria, importable under their former module name.

They live in :mod:`kernelselect.criteria.random_mcm`; this module re-exports its
names so that ``from kernelselect import random_criteria`` keeps working.
"""

from .criteria.random_mcm import (
    RANDOM_CRITERIA,
    __all__,
    class_weighted_labels,
    random_c1,
    random_c1_rff,
    random_eloo,
    random_kta,
    random_kta_row,
    random_kta_row_2g,
    random_mmd,
    random_mmd_row,
)
