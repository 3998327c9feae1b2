"""PGS (engine's queue, re-implemented with counters), plain PGS sweeps, the criterion,
PDAS active-set with exact sparse solve, and PGS-SM, on captured solves."""
import time
import numpy as np
import numba as nb
import scipy.sparse as sp
import scipy.sparse.linalg as spla

BAND = 2.0


def prep(cap):
    """Compress to the balls involved; return dict with arrays in contact form."""
    ci, cj, cn, vmin, wj, lam = cap["C"]
    nc = cap["nc"]
    moves = (cj >= 0) & (wj > 0.0)
    balls = np.unique(np.concatenate([ci, cj[moves]]))
    idx = -np.ones(len(cap["inv_mass"]), np.int64)
    idx[balls] = np.arange(len(balls))
    i = idx[ci]
    j = np.where(moves, idx[np.where(cj >= 0, cj, 0)], -1)
    im = cap["inv_mass"][balls].copy()
    v0 = cap["vel"][balls].copy()
    inv_i = im[i]
    inv_j = np.where(j >= 0, im[np.maximum(j, 0)], 0.0)
    # J (nc x 2nb)
    rows = np.repeat(np.arange(nc), 4)
    cols = np.stack([2 * i, 2 * i + 1, 2 * np.maximum(j, 0), 2 * np.maximum(j, 0) + 1], 1).ravel()
    vals = np.stack([cn[:, 0], cn[:, 1], -cn[:, 0] * (j >= 0), -cn[:, 1] * (j >= 0)], 1).ravel()
    J = sp.csr_matrix((vals, (rows, cols)), shape=(nc, 2 * len(balls)))
    J.eliminate_zeros()
    return dict(i=i, j=j, nx=cn[:, 0].copy(), ny=cn[:, 1].copy(), vmin=vmin.copy(), lam0=lam.copy(),
                inv_i=inv_i, inv_j=inv_j, im=im, m=1.0 / im, v0=v0, J=J, tol=cap["tol"], nc=nc, nb=len(balls),
                minv2=np.repeat(im, 2))


def velocities(P, lam):
    return P["v0"] + (P["minv2"] * (P["J"].T @ lam)).reshape(-1, 2)


def wvec(P, vel):
    return P["J"] @ vel.ravel() - P["vmin"]


def criterion(P, lam, vel=None):
    """(max violation of w>=0 (px/s, >0 bad), fraction of lam>0 contacts with w > 2 tol, count such,
    D = energy excess: KE_after - KE_before - sum lam (vmin+tol))."""
    if vel is None:
        vel = velocities(P, lam)
    w = wvec(P, vel)
    neg = max(0.0, -w.min())
    act = lam > 0
    over = (w > BAND * P["tol"]) & act
    ke0 = 0.5 * np.sum(P["m"][:, None] * P["v0"] ** 2)
    ke1 = 0.5 * np.sum(P["m"][:, None] * vel ** 2)
    excess = ke1 - ke0 - np.sum(lam * (P["vmin"] + P["tol"]))
    return dict(neg=neg, over_frac=over.sum() / max(act.sum(), 1), over=int(over.sum()),
                lam_neg=int((lam < 0).sum()), excess=excess, ke0=ke0, nact=int(act.sum()))


def meets(P, lam, vel=None):
    c = criterion(P, lam, vel)
    return c["neg"] == 0.0 and c["over"] == 0 and c["lam_neg"] == 0


@nb.njit(cache=True)
def _touching(i, j, nb_, nc):
    first = np.zeros(nb_ + 1, np.int64)
    for c in range(nc):
        first[i[c] + 1] += 1
        if j[c] >= 0:
            first[j[c] + 1] += 1
    for b in range(nb_):
        first[b + 1] += first[b]
    pos = first.copy()
    touching = np.empty(first[nb_], np.int64)
    for c in range(nc):
        touching[pos[i[c]]] = c
        pos[i[c]] += 1
        if j[c] >= 0:
            touching[pos[j[c]]] = c
            pos[j[c]] += 1
    return first, touching


@nb.njit(cache=True)
def _update(vel, c, a, b, nx, ny, lam, inv_i, inv_j, tol, w):
    """One Gauss-Seidel update of contact c (balls a, b; b < 0: fixed), aimed at w = tol,
    as the engine's _gauss_seidel makes it; returns the change of its impulse."""
    lc = lam[c]
    new = max(lc + (tol - w) / (inv_i[c] + inv_j[c]), 0.0)
    d = new - lc
    if d == 0.0:
        return d
    lam[c] = new
    vel[a, 0] += d * inv_i[c] * nx[c]
    vel[a, 1] += d * inv_i[c] * ny[c]
    if b >= 0:
        vel[b, 0] -= d * inv_j[c] * nx[c]
        vel[b, 1] -= d * inv_j[c] * ny[c]
    return d


@nb.njit(cache=True)
def pgs_queue(vel, i, j, nx, ny, vmin, lam, inv_i, inv_j, tol, first, touching, budget):
    """The engine's _gauss_seidel (queue, FIFO, band 2 tol, aim tol). Returns (updates, checks)."""
    nc = len(i)
    queue = np.empty(nc, np.int64)
    queued = np.zeros(nc, np.bool_)
    for c in range(nc):
        queue[c] = c
        queued[c] = True
    head, size, updates, checks = 0, nc, 0, 0
    while size > 0:
        c = queue[head]
        head = head + 1 if head + 1 < nc else 0
        size -= 1
        queued[c] = False
        a, b = i[c], j[c]
        vn = vel[a, 0] * nx[c] + vel[a, 1] * ny[c]
        if b >= 0:
            vn -= vel[b, 0] * nx[c] + vel[b, 1] * ny[c]
        w = vn - vmin[c]
        checks += 1
        lc = lam[c]
        if not (w < 0.0 or (lc > 0.0 and w > 2.0 * tol)):
            continue
        if updates >= budget:
            return -1, checks
        updates += 1
        if _update(vel, c, a, b, nx, ny, lam, inv_i, inv_j, tol, w) == 0.0:
            continue
        for side in range(2):
            bb = a if side == 0 else b
            if side == 1 and b < 0:
                break
            for p in range(first[bb], first[bb + 1]):
                e = touching[p]
                if not queued[e] and e != c:
                    queued[e] = True
                    tail = head + size
                    queue[tail - nc if tail >= nc else tail] = e
                    size += 1
    return updates, checks


@nb.njit(cache=True)
def pgs_sweeps(vel, i, j, nx, ny, vmin, lam, inv_i, inv_j, tol, nsweeps, only_off):
    """nsweeps full sweeps in order; each contact updated to aim w = tol (only where off band if
    only_off). Returns (updates, number off band seen in the last sweep)."""
    nc = len(i)
    updates = 0
    off = 0
    for s in range(nsweeps):
        off = 0
        for c in range(nc):
            a, b = i[c], j[c]
            vn = vel[a, 0] * nx[c] + vel[a, 1] * ny[c]
            if b >= 0:
                vn -= vel[b, 0] * nx[c] + vel[b, 1] * ny[c]
            w = vn - vmin[c]
            lc = lam[c]
            ob = w < 0.0 or (lc > 0.0 and w > 2.0 * tol)
            if ob:
                off += 1
            if only_off and not ob:
                continue
            updates += 1
            _update(vel, c, a, b, nx, ny, lam, inv_i, inv_j, tol, w)
    return updates, off


def args(P, vel, lam):
    return (vel, P["i"], P["j"], P["nx"], P["ny"], P["vmin"], lam, P["inv_i"], P["inv_j"], P["tol"])


def run_pgs(P, budget_per=1000):
    first, touching = _touching(P["i"], P["j"], P["nb"], P["nc"])
    lam = P["lam0"].copy()
    vel = velocities(P, lam)  # warm start applied
    t = time.perf_counter()
    u, ch = pgs_queue(*args(P, vel, lam), first, touching, budget_per * P["nc"])
    dt = time.perf_counter() - t
    return dict(updates=u, checks=ch, time=dt, lam=lam, vel=vel)


def build_A(P):
    J = P["J"]
    return (J @ sp.diags(P["minv2"]) @ J.T).tocsr()


def pcg(A, rhs, x0, d, maxit, rtol):
    """Jacobi-PCG; returns x, iterations."""
    x = x0.copy()
    r = rhs - A @ x
    z = r / d
    p = z.copy()
    rz = r @ z
    n0 = np.linalg.norm(rhs) + 1e-300
    for k in range(maxit):
        if np.linalg.norm(r) <= rtol * n0:
            return x, k
        Ap = A @ p
        pAp = p @ Ap
        if pAp <= 0:
            return x, k
        a = rz / pAp
        x += a * p
        r -= a * Ap
        z = r / d
        rz2 = r @ z
        p = z + (rz2 / rz) * p
        rz = rz2
    return x, maxit


def lu_flops(lu):
    """Flops of the sparse LU factorisation: sum over pivots of 2 l_k u_k + l_k (l_k, u_k the
    off-diagonal counts of L's column k and U's row k), plus one solve 2 nnz(L+U)."""
    L = lu.L.tocsc(); U = lu.U.tocsr()
    l = np.diff(L.indptr) - 1
    u = np.diff(U.indptr) - 1
    return float(np.sum(2.0 * l * u + l)), 2.0 * (L.nnz + U.nnz)


def active_set(P, A=None, eps_rel=1e-4, maxit=50, inner="splu", c_scale=1.0):
    """Primal-dual active set (semismooth Newton) on the LCP shifted to aim at w = tol:
    S = {lam - c (w - tol)/A_ii > 0}; solve (A_SS + eps) lam_S = tol - b_S exactly, lam_notS = 0.
    Stops when the engine's criterion holds. inner: 'splu' or 'pcg'."""
    t0 = time.perf_counter()
    if A is None:
        A = build_A(P)
    tA = time.perf_counter() - t0
    nc = P["nc"]
    dA = A.diagonal()
    b = P["J"] @ P["v0"].ravel() - P["vmin"]
    tol = P["tol"]
    lam = P["lam0"].copy()
    w = A @ lam + b
    cg_its = 0
    flops = 0.0
    factor_nnz = 0
    hist = []
    prevS = None
    for it in range(1, maxit + 1):
        S = (lam - c_scale * (w - tol) / dA) > 0
        if prevS is not None and np.array_equal(S, prevS):
            hist.append("same S")
            break
        prevS = S
        idx = np.flatnonzero(S)
        ASS = A[idx][:, idx].tocsc()
        eps = eps_rel * dA[idx].mean()
        rhs = tol - b[idx]
        new = np.zeros(nc)
        if inner == "splu":
            lu = spla.splu(ASS + eps * sp.identity(len(idx), format="csc"), permc_spec="MMD_AT_PLUS_A")
            factor_nnz += lu.L.nnz + lu.U.nnz
            ff, fs = lu_flops(lu); flops += ff + fs + 16 * nc
            new[idx] = lu.solve(rhs)
        else:
            x, k = pcg(ASS + eps * sp.identity(len(idx), format="csr"), rhs, np.maximum(lam[idx], 0), dA[idx] + eps, 2000, 1e-10)
            cg_its += k
            flops += 26.0 * k * len(idx) + 16 * nc
            new[idx] = x
        lam = new
        w = A @ lam + b
        lp = np.maximum(lam, 0.0)
        ok = meets(P, lp)
        hist.append((len(idx), int((lam < 0).sum()), int((w < 0).sum())))
        if ok:
            lam = lp
            break
    tt = time.perf_counter() - t0
    return dict(flops=flops, lam=np.maximum(lam, 0), iters=it, time=tt, tA=tA, cg_its=cg_its, factor_nnz=factor_nnz, hist=hist,
                ok=meets(P, np.maximum(lam, 0)))


def pgs_sm(P, A=None, sweeps=3, cg_max=20, maxit=200, direct=False, eps_rel=1e-4):
    """PGS-SM: `sweeps` PGS sweeps (update every contact), S = {lam > 0}, then PCG (or splu) on
    A_SS lam_S = tol - b_S from the current lam_S, project lam >= 0; repeat until the criterion holds.
    Work in update-equivalents: sweep = nc, CG iteration = 1.5 |S| (matvec over S via J, vector ops)."""
    t0 = time.perf_counter()
    if A is None:
        A = build_A(P)
    nc = P["nc"]
    dA = A.diagonal()
    b = P["J"] @ P["v0"].ravel() - P["vmin"]
    tol = P["tol"]
    lam = P["lam0"].copy()
    vel = velocities(P, lam)
    work = 0.0
    flops = 0.0
    cg_total = 0
    nsw = 0
    for it in range(1, maxit + 1):
        u, off = pgs_sweeps(*args(P, vel, lam), sweeps, False)
        work += u
        flops += 26.0 * u
        nsw += sweeps
        if meets(P, lam):
            break
        idx = np.flatnonzero(lam > 0)
        ASS = A[idx][:, idx]
        eps = eps_rel * dA[idx].mean()
        if direct:
            lu = spla.splu((ASS + eps * sp.identity(len(idx))).tocsc(), permc_spec="MMD_AT_PLUS_A")
            x = lu.solve(tol - b[idx])
            ff, fs = lu_flops(lu); flops += ff + fs
        else:
            x, k = pcg((ASS + eps * sp.identity(len(idx))).tocsr(), tol - b[idx], lam[idx], dA[idx] + eps, cg_max, 1e-12)
            cg_total += k
            work += 1.5 * k * len(idx)
            flops += 26.0 * k * len(idx)
        lam[idx] = np.maximum(x, 0.0)
        vel = velocities(P, lam)
        work += nc  # recomputing velocities: one pass
        flops += 16.0 * nc
        if meets(P, lam):
            break
    tt = time.perf_counter() - t0
    return dict(flops=flops, lam=lam, iters=it, sweeps=nsw, cg=cg_total, work=work, time=tt, ok=meets(P, lam))
