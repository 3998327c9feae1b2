"""Errors a user can cause, reported as one clear line."""
import os
import stat


class SceneError(ValueError):
    """A scene (file, dict or argument) that abound cannot run.

    ``str(err)`` is one line naming the file, the key and the reason, e.g.
    ``configs/x.toml: [[spawn]] 1: unknown key 'restitusion' - did you mean 'restitution'?``
    """


def read_user_file(path, name, kind, error=SceneError, max_bytes=None):
    """The bytes of a file the user named, or ``error`` with one line saying why
    not: no such file, a directory, not a regular file (a pipe would wait for
    a writer), larger than max_bytes, or unreadable."""
    return _user_file(path, name, kind, error, max_bytes, read=True)


def check_user_file(path, name, kind, error=SceneError, max_bytes=None):
    """As read_user_file, without reading it: opened and closed (unreadable: error)."""
    _user_file(path, name, kind, error, max_bytes, read=False)


def _user_file(path, name, kind, error, max_bytes, read):
    try:
        info = os.stat(path)  # before opening: opening a pipe would block
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{name}: not a regular file (a pipe or a device?), not a {kind}")
        if max_bytes is not None and info.st_size > max_bytes:
            raise error(f"{name}: {info.st_size / 2**20:.0f} MB is too large for a {kind} "
                        f"(at most {max_bytes >> 20} MB)")
        with open(path, "rb") as f:
            return f.read() if read else None
    except FileNotFoundError:
        raise error(f"{name}: no such file") from None
    except IsADirectoryError:
        raise error(f"{name}: is a directory, not a {kind}") from None
    except OSError as exc:
        raise error(f"{name}: cannot read: {exc.strerror or exc}") from None


MAX_NESTING = 16  # levels of tables and arrays within each other; a scene needs 4, a replay line 5


def too_deep(obj, limit=MAX_NESTING):
    """The keys and indices down to the first table or array nested more than ``limit``
    levels deep in ``obj`` (dicts and lists, as parsed TOML or JSON), else None.
    Iterative: deeper input cannot exhaust the stack here (copy.deepcopy and
    the checks after it would)."""
    stack = [(obj, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if len(path) >= limit:
            return path
        stack.extend((v, path + (k,)) for k, v in items)
    return None


def show_path(path, keep=4):
    """('world', 'gravity', 0, 0, ...) as ``world.gravity[0][0]...`` (the first ``keep`` steps)."""
    text = ""
    for k in path[:keep]:
        name = str(k) if len(str(k)) <= 20 else str(k)[:20] + "..."  # a long key is cut too
        text += f"[{name}]" if isinstance(k, int) else (f".{name}" if text else name)
    return text + ("..." if len(path) > keep else "")


class BlackHoleWarning(UserWarning):
    """A black hole pulls harder than a step's sub-steps can follow
    (abound/attractors.py, MAX_SUBSTEPS): balls passing near its centre then
    no longer keep their energy. Said once per Simulation, with the strength
    that would be followed; the ``abound`` commands print it as one line."""


class JamWarning(UserWarning):
    """Balls were stopped on a slope or a peg's side, where frictionless
    balls cannot rest: caught in a heap's rattle (an inelastic collapse), the
    rest model put them to sleep touching a segment or a peg that does not
    hold them against gravity. With contact_clusters off that is how heaps
    end, so funnels, ramps and peg boards jam; contact_clusters (on by
    default) solves such lasting contacts and the balls slide on. Said once per
    Simulation (StepStats.stuck counts them); the ``abound`` commands print
    it as one line."""


class EscapeWarning(UserWarning):
    """Balls passed through the box's walls on the pymunk backend (for
    comparison): it moves balls in fixed steps, and one that gets more than
    100 px into a wall in a step (past its middle) is pushed out through it
    and is lost. abound's
    own engines (fast, reference) find every contact and never lose a ball.
    Said once per process; the ``abound`` commands print it as one line."""
