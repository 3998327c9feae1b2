"""Two accelerations of Gauss-Seidel, on captured solves: a stress coarse
space, and nonsmooth nonlinear conjugate gradients (NNCG).

Why. Projected Gauss-Seidel's updates a contact grow about as h^1.75 with
the tick (abound/physics/ticks.py), so the ticks stay short and each pays
for listing its contacts. Longer ticks would pay only with a solve whose
work grows more slowly. Two cheap candidates, each finished by the
engine's own queue (pgs_queue) so that every result meets the engine's
stopping rule (every bound met, none pushing more than SOLVER_BAND tol
beyond it):

- two_level: sweeps of every contact, then a coarse step. A heap's load is
  the contact normal through a smooth stress, lam_c ~ n_c . Sigma_k . n_c,
  three numbers a region k (piecewise-constant impulses would be a poor
  coarse space: a ball's six contacts raised alike push it nowhere). So
  P[c, 3k + (0, 1, 2)] = (nx^2, 2 nx ny, ny^2) over the pushing contacts of
  each region (breadth-first groups of about `size` balls over the contact
  graph: the captures hold no positions); the step minimises the dual
  f(lam) = lam.A.lam / 2 + lam.(b - tol) along P (an exact sparse LU),
  projected on lam >= 0, halved until f falls.
- nncg: Silcowitz, Niebe and Erleben's NNCG (2010): after each sweep,
  with d the sweep's change of lam and beta = |d|^2 / |d_prev|^2, lam
  moves a further beta p (projected; p = beta p + d), restarting where
  beta > 1.

Work in flops a contact as study.py counts it: a check 10, an update 16
(a sweep updates every contact: 26), the queue's checks and updates as
they come; two_level's coarse step: residual 16, P^T A P 9 nnz(A) / nc,
its LU (solvers.lu_flops), each line-search try 26, velocities 16;
nncg's extra move 20. Prints one JSON line a captured solve and method;
`ratio` is the flops against the engine's queue alone.

    python benchmarks/solver_study/accelerated.py benchmarks/solver_study/caps/g10k_4.pkl [...]
"""
import os, sys, pickle, json
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from solvers import prep, velocities, wvec, meets, _touching, pgs_queue, pgs_sweeps, args, build_A, lu_flops


def regions(P, size):
    """Each ball's region (int array, nb) and their count: breadth-first
    groups of about size balls over the balls' contact graph, in ball order."""
    first, touching = _touching(P["i"], P["j"], P["nb"], P["nc"])
    reg = -np.ones(P["nb"], np.int64)
    k = 0
    for b0 in range(P["nb"]):
        if reg[b0] >= 0:
            continue
        reg[b0] = k
        front, count = [b0], 1
        while front and count < size:
            nxt = []
            for b in front:
                for p in range(first[b], first[b + 1]):
                    c = touching[p]
                    for o in (P["i"][c], P["j"][c]):
                        if o >= 0 and reg[o] < 0 and count < size:
                            reg[o] = k
                            count += 1
                            nxt.append(o)
            front = nxt
        k += 1
    return reg, k


def dual(A, b, tol, lam):
    """The dual f(lam) the updates lower, aimed at w = tol."""
    return 0.5 * lam @ (A @ lam) + lam @ (b - tol)


def finish(P, vel, lam):
    """The engine's queue from (vel, lam) to its stopping rule: (flops, updates) a contact."""
    first, touching = _touching(P["i"], P["j"], P["nb"], P["nc"])
    u, ch = pgs_queue(*args(P, vel, lam), first, touching, 1000 * P["nc"])
    return (10.0 * ch + 16.0 * max(u, 0)) / P["nc"], u / P["nc"]


def two_level(P, A, size=16, sweeps=2, cycles=4):
    nc, tol = P["nc"], P["tol"]
    b = P["J"] @ P["v0"].ravel() - P["vmin"]
    reg, K = regions(P, size)
    creg = reg[P["i"]]
    basis = np.stack([P["nx"] ** 2, 2 * P["nx"] * P["ny"], P["ny"] ** 2], 1)
    lam = P["lam0"].copy()
    vel = velocities(P, lam)
    flops = 0.0
    for _ in range(cycles):
        u, _off = pgs_sweeps(*args(P, vel, lam), sweeps, False)
        flops += 26.0 * u
        if meets(P, lam, vel):
            break
        w = wvec(P, vel)
        idx = np.flatnonzero(lam > 0)
        cols = 3 * creg[idx][:, None] + np.arange(3)[None, :]
        Pm = sp.csr_matrix((basis[idx].ravel(), (np.repeat(idx, 3), cols.ravel())), shape=(nc, 3 * K))
        Pm = Pm[:, np.flatnonzero(np.asarray(abs(Pm).sum(0)).ravel() > 0)]
        Ac = (Pm.T @ A @ Pm).tocsc()
        Ac = Ac + 1e-10 * Ac.diagonal().mean() * sp.identity(Ac.shape[0], format="csc")
        lu = spla.splu(Ac, permc_spec="MMD_AT_PLUS_A")
        ff, fs = lu_flops(lu)
        step = Pm @ lu.solve(-(Pm.T @ (w - tol)))
        flops += 16.0 * nc + 9.0 * A.nnz + ff + fs
        f0 = dual(A, b, tol, lam)
        alpha = 1.0
        for _try in range(8):
            trial = np.maximum(lam + alpha * step, 0.0)
            flops += 26.0 * nc
            if dual(A, b, tol, trial) < f0:
                lam = trial
                break
            alpha *= 0.5
        vel = velocities(P, lam)
        flops += 16.0 * nc
    ff, fu = finish(P, vel, lam)
    return flops / nc + ff, fu


def nncg(P, sweeps):
    nc = P["nc"]
    JT = P["J"].T.tocsr()
    lam = P["lam0"].copy()
    vel = velocities(P, lam)
    flops = 0.0
    p = np.zeros(nc)
    prev = None
    for _ in range(sweeps):
        before = lam.copy()
        pgs_sweeps(*args(P, vel, lam), 1, False)
        flops += 26.0 * nc
        d = lam - before
        dd = d @ d
        if prev is None:
            p = d.copy()
        elif dd > prev:
            p[:] = 0.0  # (a restart: the sweep's change grew)
        else:
            beta = dd / prev
            moved = np.maximum(lam + beta * p, 0.0)
            vel += (P["minv2"] * (JT @ (moved - lam))).reshape(-1, 2)
            lam = moved
            p = beta * p + d
            flops += 20.0 * nc
        prev = dd
    vel = velocities(P, lam)  # (afresh: no drift of the sums carried in)
    ff, fu = finish(P, vel, lam)
    return flops / nc + ff, fu


if __name__ == "__main__":
    maxcaps = int(os.environ.get("MAXCAPS", "1"))
    for path in sys.argv[1:]:
        D = pickle.load(open(path, "rb"))
        for k, cap in enumerate(D["caps"][:maxcaps]):
            P = prep(cap)
            A = build_A(P)
            base, bu = finish(P, velocities(P, P["lam0"]), P["lam0"].copy())
            row = dict(cap=os.path.basename(path), k=k, h=cap["h"], nc=P["nc"])
            print(json.dumps(dict(row, method="queue", flops=round(base), updates=round(bu, 1))), flush=True)
            for size in (4, 16, 64):
                f, u = two_level(P, A, size=size)
                print(json.dumps(dict(row, method=f"two_level size {size}", flops=round(f), ratio=round(f / base, 3), finish_updates=round(u, 1))), flush=True)
            for sweeps in (10, 20, 40, 80, 100, 120):
                f, u = nncg(P, sweeps)
                print(json.dumps(dict(row, method=f"nncg {sweeps} sweeps", flops=round(f), ratio=round(f / base, 3), finish_updates=round(u, 1))), flush=True)
