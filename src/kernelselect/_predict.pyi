# Type stubs of the compiled module ext/kernelselect/_predict.pyx.
import numpy as np
import numpy.typing as npt

def cross_kernel_matvec_into(X_new: npt.NDArray[np.float64], X_train: npt.NDArray[np.float64],
                             C: npt.NDArray[np.float64], gamma: float, kernel: int,
                             out: npt.NDArray[np.float64], threads: int) -> None: ...
def distance_kernel_matvec_into(D: npt.NDArray[np.float64], gamma: float,
                                C: npt.NDArray[np.float64], out: npt.NDArray[np.float64],
                                threads: int) -> None: ...
