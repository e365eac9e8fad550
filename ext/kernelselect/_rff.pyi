# Type stubs of the compiled module _rff.pyx beside this file.
import numpy as np
import numpy.typing as npt

def vecmath_backend() -> str: ...
def _rff_columns_into(X: npt.NDArray[np.floating], W: npt.NDArray[np.floating],
                      b: npt.NDArray[np.floating], row_scale: npt.NDArray[np.floating],
                      scale: float, out: npt.NDArray[np.floating], threads: int) -> None: ...
