"""The package's own utilities, below everything else: input checks, settings, the
memory guard, the thread policy, label encoding, targets, progress, the kernel family
as a typed value, standardisation, Dask detection and its row source, the user-warning
helper, and scikit-learn's machinery or its stand-ins.

Private: the public names they serve are re-exported elsewhere (``set_config`` and its
kin from :mod:`kernelselect`). Importing this package imports none of its modules.
"""
