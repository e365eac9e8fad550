# Type stubs of the compiled module ext/kernelselect/_rff.pyx.
import numpy as np
import numpy.typing as npt

def vecmath_backend() -> str: ...
def _rff_columns(X: npt.NDArray[np.floating], W: npt.NDArray[np.floating],
                 b: npt.NDArray[np.floating], row_scale: npt.NDArray[np.floating], scale: float,
                 out: npt.NDArray[np.floating],
                 n_threads: int) -> npt.NDArray[np.floating]: ...
