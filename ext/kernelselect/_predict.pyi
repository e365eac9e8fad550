# Type stubs of the compiled module _predict.pyx beside this file.
import numpy as np
import numpy.typing as npt

def _cross_kernel_matvec_into(X_new: npt.NDArray[np.float64],
                              X_train: npt.NDArray[np.float64], C: npt.NDArray[np.float64],
                              gamma: float, kernel: int, out: npt.NDArray[np.float64],
                              threads: int) -> None: ...
def _distance_kernel_matvec_into(D: npt.NDArray[np.float64], C: npt.NDArray[np.float64],
                                 gamma: float, out: npt.NDArray[np.float64],
                                 threads: int) -> None: ...
