"""Run all methods on captured solves. usage: python study.py caps/NAME.pkl [...]"""
import os, sys, pickle, time, json
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from solvers import *
from abound.physics.backends import get
get("fast")
import abound.physics._compiled.contact_solver as csf

only = os.environ.get("METHODS", "pgs,as_lu,sm3,sm3d").split(",")
maxcaps = int(os.environ.get("MAXCAPS", "2"))
for path in sys.argv[1:]:
    D = pickle.load(open(path, "rb"))
    for k, cap in enumerate(D["caps"][:maxcaps]):
        P = prep(cap)
        nc = P["nc"]
        r = dict(cap=os.path.basename(path), k=k, h=cap["h"], nc=nc, nb=P["nb"], tol=P["tol"], eng_upd=cap["upd"] / nc)
        # engine's compiled PGS on a copy: updates & time (best of 3)
        best = 1e9
        for rep in range(3):
            vel = cap["vel"].copy(); C = tuple(a.copy() for a in cap["C"])
            S = csf.solver_scratch(len(vel), nc)
            t = time.perf_counter(); u = csf.solve_impulses(vel, cap["inv_mass"], C, nc, cap["tol"], S); best = min(best, time.perf_counter() - t)
        lam_e = C[5]
        ce = criterion(P, lam_e, vel[np.unique(np.concatenate([cap["C"][0], cap["C"][1][(cap["C"][1] >= 0) & (cap["C"][4] > 0)]]))])
        r.update(eng_upd2=u / nc, eng_time=best, eng_ns_per_upd=best / max(u, 1) * 1e9,
                 eng_neg=ce["neg"], eng_over=ce["over_frac"], eng_excess=ce["excess"], eng_nact=ce["nact"])
        if "pgs" in only:
            R = run_pgs(P); R = run_pgs(P)
            c = criterion(P, R["lam"], R["vel"])
            r.update(my_flops=(10.0 * R["checks"] + 16.0 * R["updates"]) / nc, my_upd=R["updates"] / nc, my_checks=R["checks"] / nc, my_time=R["time"], my_neg=c["neg"],
                     my_over=c["over_frac"], my_excess=c["excess"])
        A = build_A(P)
        if "as_lu" in only:
            R = active_set(P, A)
            c = criterion(P, R["lam"])
            r.update(as_flops=R["flops"] / nc, as_iters=R["iters"], as_time=R["time"], as_tA=R["tA"], as_ok=R["ok"], as_neg=c["neg"], as_over=c["over_frac"],
                     as_excess=c["excess"], as_hist=str(R["hist"][-3:]), as_fnnz=R["factor_nnz"] / max(R["iters"], 1))
        if "as_cg" in only:
            R = active_set(P, A, inner="pcg")
            c = criterion(P, R["lam"])
            r.update(ascg_flops=R["flops"] / nc, ascg_iters=R["iters"], ascg_cg=R["cg_its"], ascg_time=R["time"], ascg_ok=R["ok"], ascg_neg=c["neg"], ascg_over=c["over_frac"])
        for name, kw in (("sm3", dict(sweeps=3, cg_max=20)), ("sm3d", dict(sweeps=3, direct=True)), ("sm1", dict(sweeps=1, cg_max=30))):
            if name in only:
                R = pgs_sm(P, A, **kw)
                c = criterion(P, R["lam"])
                r.update({f"{name}_flops": R["flops"] / nc, f"{name}_iters": R["iters"], f"{name}_sweeps": R["sweeps"], f"{name}_cg": R["cg"], f"{name}_work": R["work"] / nc,
                          f"{name}_time": R["time"], f"{name}_ok": R["ok"], f"{name}_neg": c["neg"], f"{name}_over": c["over_frac"], f"{name}_excess": c["excess"]})
        print(json.dumps(r, default=float), flush=True)
