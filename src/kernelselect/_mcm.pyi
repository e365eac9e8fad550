# Type stubs of the compiled module ext/kernelselect/_mcm.pyx.
import numpy as np
import numpy.typing as npt

def _song_xu_column(m: npt.NDArray[np.intp], h: npt.NDArray[np.float64], gamma: float,
                    kernel: int, out: npt.NDArray[np.float64],
                    n_threads: int) -> npt.NDArray[np.float64]: ...
