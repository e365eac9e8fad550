# Type stubs of the compiled module _nystrom_passes.pyx beside this file.
import numpy as np
import numpy.typing as npt

def _pass_groups(n: int) -> int: ...
def _pass_buffer_entries(d: int, m: int, t: int) -> int: ...
def _nystrom_pass_into(mode: int, X: npt.NDArray[np.float64], shift: npt.NDArray[np.float64],
                       scale: float, Z: npt.NDArray[np.float64], V: npt.NDArray[np.float64],
                       gamma: float, kernel: int, out: npt.NDArray[np.float64],
                       partials: npt.NDArray[np.float64], threads: int) -> None: ...
