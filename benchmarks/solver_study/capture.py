"""Capture real cluster solves at a tick of H_MS ms (see README.md beside this file).

    python capture.py STATE.pkl H_MS NAME [warm_frames] [max_caps]

Steps a saved state (benchmarks/ab_engine.py --save-state) with the fast
engine for warm_frames frames of whole ticks of exactly H_MS (so the warm
starts are this tick's), then one frame with the reference engine, its
clusters.solve_impulses patched to save (vel, inv_mass, C[:nc], nc, tol, h)
of each solve of that tick and to run the compiled solve on the same arrays.
Writes caps/NAME.pkl beside this file."""
import os, sys, pickle, time
HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
import numpy as np
from abound.physics.backends import get
from abound.physics.constants import P_TICK, P_WARM, TICK, WARM_SETTLING
import abound.physics.clusters as clusters_py

path, hms, name = sys.argv[1], float(sys.argv[2]), sys.argv[3]
warm_frames = int(sys.argv[4]) if len(sys.argv) > 4 else 2
max_caps = int(sys.argv[5]) if len(sys.argv) > 5 else 6
h = hms / 1000.0
os.makedirs(os.path.join(HERE, "caps"), exist_ok=True)
scene, n, (B, W, params) = pickle.load(open(path, "rb"))
B, W = tuple(B), tuple(W)
params = params.copy()
params[P_TICK] = h
params[P_WARM] = WARM_SETTLING ** (h / TICK)  # (as ticks.warm_share, for any h)
k = max(1, int(round((1 / 60) / h)))
dt = k * h  # a frame of whole ticks of exactly h
fast = get("fast")[1]
import abound.physics._compiled.contact_solver as cs_fast
ref = get("reference")[1]
t0 = time.time()
for f in range(warm_frames):
    fast.step(B, W, params, dt)
print(f"{warm_frames} fast frames dt={dt:.5f} in {time.time()-t0:.1f}s", flush=True)
caps = []
def wrapper(vel, inv_mass, C, nc, tol, S):
    hh = sys._getframe(1).f_locals.get("h", np.nan)
    mine = abs(hh - h) < 1e-12 and nc > 100
    if mine and len(caps) < max_caps:
        caps.append(dict(vel=vel.copy(), inv_mass=inv_mass.copy(),
                         C=tuple(np.array(a[:nc]) for a in C), nc=int(nc), tol=float(tol), h=float(hh)))
    u = cs_fast.solve_impulses(vel, inv_mass, C, nc, tol, S)
    if caps and "upd" not in caps[-1]:
        caps[-1]["upd"] = int(u)
        caps[-1]["lam_out"] = np.array(C[5][:nc])
        caps[-1]["vel_out"] = vel.copy()
    if mine and len(caps) >= max_caps and "done" not in caps[0]:
        caps[0]["done"] = 1
        pickle.dump(dict(scene=scene, h=h, caps=caps), open(os.path.join(HERE, "caps", f"{name}.pkl"), "wb"))
        print("saved early", flush=True); sys.stdout.flush(); os._exit(0)
    print(f"  solve nc={nc} tol={tol:.4g} h={hh:.5g} updates={u} ({u/max(nc,1):.2f}/contact)", flush=True)
    return u
clusters_py.solve_impulses = wrapper
t0 = time.time()
ref.step(B, W, params, dt)
print(f"ref frame {time.time()-t0:.1f}s, {len(caps)} captures", flush=True)
assert caps, "patch not hit"
pickle.dump(dict(scene=scene, h=h, caps=caps), open(os.path.join(HERE, "caps", f"{name}.pkl"), "wb"))
