# Type stubs of the compiled module _kernels.pyx beside this file.
import numpy as np
import numpy.typing as npt

def _kernel_block_into(X: npt.NDArray[np.floating], Z: npt.NDArray[np.floating], gamma: float,
                       kernel: int, K: npt.NDArray[np.floating], threads: int) -> None: ...
def _kernel_matvec_into(X: npt.NDArray[np.floating], V: npt.NDArray[np.floating], gamma: float,
                        kernel: int, Y: npt.NDArray[np.floating], threads: int) -> None: ...
def _kernel_sums_into(X: npt.NDArray[np.floating], codes: npt.NDArray[np.intp], gamma: float,
                      kernel: int, class_row_sums: npt.NDArray[np.float64],
                      row_sq_sums: npt.NDArray[np.float64], threads: int) -> None: ...
