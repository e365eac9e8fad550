"""Column builders: Song–Xu first column, labelled RFF column, random Fourier features."""

import numpy as np

from ._common import (COLUMN_SIZES, N_COMPONENTS, WORKERS, data, grid, lowlevel, require,
                      rff_weights)


class SongXuColumn:
    params = (COLUMN_SIZES, [1, 2, 3], ["gaussian", "laplacian"], WORKERS)
    param_names = ["n", "p", "kernel", "workers"]

    def setup(self, n, p, kernel, workers):
        self.func = require(lowlevel("song_xu_column"))
        self.m = grid(n, p)
        self.h = tuple(1.0 / s for s in self.m)

    def time_song_xu_column(self, n, p, kernel, workers):
        self.func(self.m, self.h, 0.5, kernel=kernel, workers=workers)


class LabeledRFFColumn:
    params = (COLUMN_SIZES, ["labelled", "unlabelled"], WORKERS)
    param_names = ["n", "y", "workers"]

    def setup(self, n, y, workers):
        self.func = require(lowlevel("labeled_rff_column"))
        self.X, self.y = data(n)
        if y == "unlabelled":
            self.y = None
        self.W, self.b = rff_weights()

    def time_labeled_rff_column(self, n, y, workers):
        self.func(self.X, self.y, self.W, self.b, workers=workers)

    def time_numpy_peer(self, n, y, workers):
        # what a user would write (BLAS threads are not limited here)
        Z = np.cos(self.X @ self.W + self.b)
        Z *= np.sqrt(2.0) / N_COMPONENTS
        if self.y is not None:
            Z *= self.y[:, None]


class RFFFeatures:
    params = (COLUMN_SIZES, ["float64", "float32"], WORKERS)
    param_names = ["n", "dtype", "workers"]

    def setup(self, n, dtype, workers):
        self.func = require(lowlevel("rff_features"))
        self.X, _ = data(n, dtype=np.dtype(dtype))
        self.W, self.b = rff_weights(dtype=np.dtype(dtype))

    def time_rff_features(self, n, dtype, workers):
        self.func(self.X, self.W, self.b, workers=workers)

    def time_numpy_peer(self, n, dtype, workers):
        np.sqrt(2.0 / N_COMPONENTS) * np.cos(self.X @ self.W + self.b)
