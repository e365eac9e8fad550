"""The FFT layer (cached pyFFTW plans, scipy fallback) against scipy.fft called directly."""

import numpy as np
import scipy.fft

from ._common import LARGE, WORKERS, fft_module, require

SHAPES = ["10000x100", "100000x100", "64x64x64"] + (
    ["1000000x100", "128x128x128"] if LARGE else []
)
IMPLEMENTATIONS = ["kernelselect-pyfftw", "kernelselect-scipy", "scipy.fft"]


def _shape(text):
    return tuple(int(s) for s in text.split("x"))


class RealFFT:
    params = (SHAPES, ["float64", "float32"], IMPLEMENTATIONS, WORKERS)
    param_names = ["shape", "dtype", "implementation", "workers"]

    def setup(self, shape, dtype, implementation, workers):
        shp = _shape(shape)
        self.a = np.random.default_rng(0).standard_normal(shp).astype(dtype)
        if implementation == "scipy.fft":
            self.forward = lambda a: scipy.fft.rfftn(a, workers=workers)
            self.inverse = lambda A: scipy.fft.irfftn(A, s=shp, workers=workers)
        else:
            fft = require(fft_module())
            backend = implementation.split("-")[1]
            try:
                fft.rfftn(np.ones(4), backend=backend)
            except ValueError:  # pyFFTW not importable in this environment
                raise NotImplementedError(f"{backend} backend unavailable") from None
            self.forward = lambda a: fft.rfftn(a, workers=workers, backend=backend)
            self.inverse = lambda A: fft.irfftn(A, shp, workers=workers, backend=backend)
        self.A = self.forward(self.a)  # plans the transforms before timing

    def time_rfftn(self, shape, dtype, implementation, workers):
        self.forward(self.a)

    def time_irfftn(self, shape, dtype, implementation, workers):
        self.inverse(self.A)


class SpectrumSum:
    """Σ over the full spectrum from the half spectrum vs a full complex FFT."""

    params = (["10000x100", "64x64x64"],)
    param_names = ["shape"]

    def setup(self, shape):
        self.fft = require(fft_module())
        self.shape = _shape(shape)
        a = np.random.default_rng(0).standard_normal(self.shape)
        self.V = self.fft.rfftn(a)
        self.s = np.abs(self.V) ** 2
        self.alphas = np.logspace(-3, 1, 8)

    def time_full_spectrum_sum_alpha_path(self, shape):
        s = self.s[..., None]
        self.fft.full_spectrum_sum(s / (s + self.alphas), self.shape)
