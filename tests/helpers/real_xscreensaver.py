"""abound as a hack of the real xscreensaver 6 (Debian's), on a private Xvfb, as a normal user.

Run it as root from a checkout (it makes the user and the venv), by hand:

    apt-get install -y xscreensaver xscreensaver-data python3-venv xvfb
    python tests/helpers/real_xscreensaver.py [--keep]

xscreensaver refuses to launch hacks as root, and root's Python may not be
executable by another user, so: a user ``abound-xs`` (made if missing), a
venv from Debian's ``/usr/bin/python3`` in a temporary directory that user
can read, with numpy, numba, pyglet, Pillow and this checkout of abound
pip-installed into it. As that user: Xvfb, ``~/.xscreensaver`` with abound
(the still scene of ``tests/helpers/xwindows.py``) as the one hack in
``programs:``, ``xscreensaver``, ``xscreensaver-command -activate``; then
the window xscreensaver gave abound (``$XSCREENSAVER_WINDOW`` in abound's
environment) must show every ball where the scene fitted into it puts
it; ``xscreensaver-command -deactivate`` must leave no abound process a
second later. Last, a preview-sized window (320x240, as
``xscreensaver-settings`` shows one) made here and passed by
``--window-id``: the balls again, and exit within a second of its
destruction. Prints each step and a PNG of each window; exit status 0 when
all hold. Not part of the default test run: it installs packages (a
couple of minutes) and needs root.
"""
import argparse
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "helpers")]
from xwindows import SCENE, XWindow, grab, grab_window, misplaced  # noqa: E402

USER = "abound-xs"
PACKAGES = ["numpy", "numba", "pyglet", "Pillow"]
STARTUP = 180.0  # s until the picture is right (a first run of the venv may compile)
EXIT = 1.0       # s from deactivation / destruction to no abound process


def wait_for_server(display, seconds=30):
    """Until the X server ``display`` answers a connection."""
    from xwindows import _lib
    lib = _lib()
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        dpy = lib.XOpenDisplay(display.encode())
        if dpy:
            lib.XSync(dpy, 0)
            lib.XCloseDisplay(dpy)
            return
        time.sleep(0.1)
    raise RuntimeError(f"no X server on {display}")


def step(text):
    print(f"--- {text}", flush=True)


def as_user(cmd, env, **kw):
    return subprocess.Popen(["runuser", "-u", USER, "--", "env", "-i", *[f"{k}={v}" for k, v in env.items()], *cmd],
                            **kw)


def run_as_user(cmd, env, timeout=30):
    proc = as_user(cmd, env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def make_user():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", USER], check=True)
        return pwd.getpwnam(USER)


def make_venv(work):
    venv = work / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + PACKAGES, check=True)
    subprocess.run(pip + ["--no-deps", str(REPO)], check=True)
    return venv


def abound_pids(venv):
    """Processes running the venv's abound: pid -> environment."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            if any(str(venv).encode() in c for c in cmd) and (b"saver" in cmd or compiler(cmd)):
                env = dict(kv.split(b"=", 1) for kv in (entry / "environ").read_bytes().split(b"\0") if b"=" in kv)
                found[int(entry.name)] = {k.decode(): v.decode() for k, v in env.items()}
        except OSError:
            continue
    return found


def compiler(cmd):
    """Whether a command line is abound's child compiling the fast engine (abound/warmup.py)."""
    return any(b"compile_here" in c for c in cmd)


def saver_pid(pids):
    """The saver among abound's processes (not its compiling child)."""
    for pid in pids:
        try:
            if not compiler(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")):
                return pid
        except OSError:
            continue
    return next(iter(pids))


def wait_gone(pids, seconds, t0):
    """Seconds from t0 until none of pids runs (None: still running 2 s past the bound)."""
    while time.monotonic() - t0 < seconds + 2.0:
        if not any(Path(f"/proc/{p}").exists() and _running(p) for p in pids):
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def _running(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
        return state != "Z"
    except (OSError, IndexError):
        return False


def wait_picture(grab_it, size_of, seconds):
    t_end = time.monotonic() + seconds
    wrong = ["nothing read"]
    while time.monotonic() < t_end:
        try:
            image = grab_it()
        except RuntimeError as exc:
            wrong = [str(exc)]
        else:
            wrong = misplaced(image, size_of(image))
            if not wrong:
                return image, []
        time.sleep(0.5)
    return None, wrong


def save(image, path):
    from PIL import Image
    Image.fromarray(image).save(path)
    print(f"    picture: {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (venv, logs, pictures)")
    opts = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: it makes the user and the venv")
    for tool in ("xscreensaver", "xscreensaver-command", "Xvfb", "runuser"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: apt-get install -y xscreensaver xscreensaver-data python3-venv xvfb")
    failures = []
    user = make_user()
    work = Path(tempfile.mkdtemp(prefix="abound-xs-"))
    work.chmod(0o755)
    xvfb = saver = None
    try:
        step(f"venv from /usr/bin/python3 in {work}: {' '.join(PACKAGES)} and abound from {REPO}")
        t0 = time.monotonic()
        venv = make_venv(work)
        print(f"    {time.monotonic() - t0:.0f} s")
        scene = work / "still.toml"
        scene.write_text(SCENE)
        subprocess.run(["chmod", "-R", "a+rX", str(work)], check=True)

        num = next(n for n in range(60, 99) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))
        display = f":{num}"
        env = {"HOME": user.pw_dir, "USER": USER, "DISPLAY": display, "PATH": "/usr/bin:/bin",
               "LANG": "C.UTF-8"}
        step(f"Xvfb {display} and xscreensaver as {USER}")
        xvfb = as_user(["Xvfb", display, "-screen", "0", "1280x720x24", "-nolisten", "tcp", "-noreset"], env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_server(display)
        # the programs: entry as abound prints it (abound saver --xscreensaver-setup), with the scene added
        setup = subprocess.run([str(venv / "bin" / "abound"), "saver", "--xscreensaver-setup"],
                               capture_output=True, text=True, check=True).stdout
        entry = next(x for x in setup.splitlines() if x.rstrip().endswith("\\n\\"))
        words = shlex.split(entry.rstrip()[:-3])
        if words[1] != str(venv / "bin" / "abound") or words[2:] != ["saver", "--root"]:
            failures.append(f"--xscreensaver-setup's programs: entry is not the venv's abound: {entry}")
        line = f"{words[1]} saver --scene {scene} --root"
        rc = Path(user.pw_dir) / ".xscreensaver"
        rc.write_text("\n".join([
            "timeout: 0:30:00", "lock: False", "fade: False", "unfade: False", "splash: False",
            "mode: one", "selected: 0", "dpmsEnabled: False",
            "programs: \\", f'  "abound" {line} \\n\\', "", ""]))
        shutil.chown(rc, USER, USER)
        print(f"    ~/.xscreensaver programs: \"abound\" {line}")
        log = open(work / "xscreensaver.log", "w")
        for attempt in range(3):
            # xscreensaver 6.06 sometimes stops after its first log lines on a fresh Xvfb: start it again
            saver = as_user(["xscreensaver", "-no-splash", "-verbose"], env, stdout=log, stderr=subprocess.STDOUT)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 20:
                code, out = run_as_user(["xscreensaver-command", "-version"], env)
                if code == 0:
                    break
                time.sleep(0.5)
            print(f"    {out.strip()} ({time.monotonic() - t0:.1f} s)")
            if code == 0:
                break
            saver.terminate()
            saver.wait(10)

        step("xscreensaver-command -activate")
        code, out = run_as_user(["xscreensaver-command", "-activate"], env)
        print(f"    {out.strip()}")
        pids = {}
        t_end = time.monotonic() + 30
        while not pids and time.monotonic() < t_end:
            pids = abound_pids(venv)
            time.sleep(0.1)
        if not pids:
            failures.append("xscreensaver started no abound process (see xscreensaver.log)")
        else:
            time.sleep(1.0)  # a compiling child too, if the cache is cold (it must go as well)
            pids.update(abound_pids(venv))
            pid = saver_pid(pids)
            penv = pids[pid]
            if len(pids) > 1:
                print(f"    and {len(pids) - 1} more: {sorted(pids)}")
            xid = int(penv.get("XSCREENSAVER_WINDOW", "0"), 16)
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            print(f"    abound pid {pid}: {cmdline}")
            print(f"    $XSCREENSAVER_WINDOW={penv.get('XSCREENSAVER_WINDOW')}")
            image, wrong = wait_picture(lambda: grab_window(display, xid), lambda im: (im.shape[1], im.shape[0]),
                                        STARTUP)
            if wrong:
                failures.append(f"xscreensaver's window: {wrong}")
                try:
                    save(grab_window(display, xid), work / "xscreensaver-window.png")
                except RuntimeError:
                    pass
            else:
                print(f"    xscreensaver's window {xid:#x} ({image.shape[1]}x{image.shape[0]}): "
                      f"every ball where the state puts it")
                save(image, work / "xscreensaver-window.png")
            step("xscreensaver-command -deactivate")
            t0 = time.monotonic()
            code, out = run_as_user(["xscreensaver-command", "-deactivate"], env)
            print(f"    {out.strip()}")
            took = wait_gone(pids, EXIT, t0)
            if took is None or took >= EXIT:
                failures.append(f"abound still running {EXIT} s after -deactivate ({took})")
            else:
                print(f"    no abound process {took:.2f} s after xscreensaver-command -deactivate began")

        step("a preview-sized window (320x240) by --window-id, as xscreensaver-settings runs a hack")
        window = XWindow(display, 20, 20, 320, 240)
        proc = as_user([str(venv / "bin" / "abound"), "saver", str(scene), "--window-id", str(window.id)], env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        image, wrong = wait_picture(lambda: grab(window), lambda im: window.size, STARTUP)
        if wrong:
            failures.append(f"preview window: {wrong}")
        else:
            print("    every ball where the state puts it")
            save(image, work / "preview-window.png")
        window.destroy()
        t0 = time.monotonic()
        try:
            proc.wait(EXIT + 1.0)
            took = time.monotonic() - t0
            if took >= EXIT:
                failures.append(f"preview: abound took {took:.2f} s to exit")
            else:
                print(f"    exited ({proc.returncode}) {took:.2f} s after its window was destroyed")
        except subprocess.TimeoutExpired:
            proc.kill()
            failures.append("preview: abound still running after its window was destroyed")
        out = proc.stdout.read().strip()
        if out:
            print(f"    abound said: {out}")
    finally:
        for p in (saver, xvfb):
            if p is not None and p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        if opts.keep or failures:
            print(f"--- kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("OK: abound runs as a hack of the real xscreensaver")
    return 0


if __name__ == "__main__":
    sys.exit(main())
