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
            return f.read()
    except FileNotFoundError:
        raise error(f"{name}: no such file") from None
    except IsADirectoryError:
        raise error(f"{name}: is a directory, not a {kind}") from None
    except OSError as exc:
        raise error(f"{name}: cannot read: {exc.strerror or exc}") from None
