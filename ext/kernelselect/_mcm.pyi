# Type stubs of the compiled module _mcm.pyx beside this file.
import numpy as np
import numpy.typing as npt

def _song_xu_column_into(m: npt.NDArray[np.intp], h: npt.NDArray[np.float64], gamma: float,
                         kernel: int, out: npt.NDArray[np.float64], threads: int) -> None: ...
