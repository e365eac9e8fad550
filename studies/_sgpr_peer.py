"""A scalable Gaussian-process peer for ``studies/ard_scale.py --fitted``: GPyTorch's
SGPR (Titsias' collapsed variational bound, ``InducingPointKernel``) with a scaled
ARD RBF kernel, 500 inducing points started at random training rows (seed 0), 100 Adam
steps (learning rate 0.1) on the bound, one thread. Runs in its own interpreter (the
one torch and gpytorch are installed in); reads ``split.npz`` (Xtr, ytr, Xte), writes
the test predictions to ``split.npz.pred.npy`` and prints one JSON line."""

import json
import sys
import time

import numpy as np
import torch
import gpytorch

torch.set_num_threads(1)
torch.manual_seed(0)
path = sys.argv[1]
data = np.load(path)
Xtr = torch.as_tensor(data["Xtr"], dtype=torch.float64)
ytr = torch.as_tensor(data["ytr"], dtype=torch.float64)
Xte = torch.as_tensor(data["Xte"], dtype=torch.float64)
n, d = Xtr.shape
m = min(500, n)
start = Xtr[np.random.default_rng(0).choice(n, size=m, replace=False)].clone()


class SGPR(gpytorch.models.ExactGP):
    def __init__(self, X, y, likelihood):
        super().__init__(X, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        base = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=d))
        self.covar_module = gpytorch.kernels.InducingPointKernel(
            base, inducing_points=start, likelihood=likelihood)

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                         self.covar_module(x))


t0 = time.perf_counter()
likelihood = gpytorch.likelihoods.GaussianLikelihood().double()
model = SGPR(Xtr, ytr, likelihood).double()
model.train()
likelihood.train()
opt = torch.optim.Adam(model.parameters(), lr=0.1)
mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
steps = 100
for _ in range(steps):
    opt.zero_grad()
    loss = -mll(model(Xtr), ytr)
    loss.backward()
    opt.step()
model.eval()
likelihood.eval()
with torch.no_grad(), gpytorch.settings.fast_pred_var():
    f = model(Xte).mean.numpy()
np.save(path + ".pred.npy", f)
print(json.dumps(dict(fit_seconds=time.perf_counter() - t0, inducing=m, steps=steps,
                      final_loss=float(loss.item()),
                      noise=float(likelihood.noise.item()))))
