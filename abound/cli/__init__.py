"""The ``abound`` command: ``abound <command> [options]``.

Each command is a module ``abound.cli.<name>`` with ``add_arguments(parser)``
and ``run(args) -> int``. Only the module of the command being run is
imported (so ``abound check`` never imports pyglet). A bad scene or a bad
argument is one line on stderr, ``abound: error: <message>``, and exit status 2.
"""
import argparse
import importlib
import sys

# name -> one-line help; the order is the order of ``abound --help``
COMMANDS = {
    "demo": "open a window and run a scene (the main job)",
    "saver": "run as a full-screen screensaver",
    "capture": "render a scene headlessly to image frames or a video",
    "replay": "replay a recorded run",
    "check": "validate scene files",
    "bench": "time the physics headlessly (no window)",
}
PROG = "abound"


def _fail(message):
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line, like every other bad input:
    ``abound: error: argument --frames: must be >= 1, not 0 (see 'abound demo --help')``.
    Subcommand parsers are made by the same class."""

    help_command = None  # the top-level parser names the chosen command's --help

    def error(self, message):
        where = self.help_command or self.prog
        self.exit(2, f"{PROG}: error: {' '.join(message.split())} (see '{where} --help')\n")


def _load(name):
    """The command module, or a one-line reason why it cannot be loaded."""
    modname = f"abound.cli.{name}"
    try:
        return importlib.import_module(modname), None
    except ModuleNotFoundError as exc:
        if exc.name == modname:
            return None, f"the '{name}' command is not available in this version of abound"
        return None, f"the '{name}' command cannot start: {exc}"
    except ImportError as exc:
        return None, f"the '{name}' command cannot start: {exc}"


def _chosen(argv):
    """The command named in argv (the first word that is not an option), if any."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _join_dashed_values(parser, name, argv):
    """``--size -5x5`` as ``--size=-5x5``: argparse takes a value that starts with '-' (and is
    not a plain negative number) for an option, and says "expected one argument" instead of
    what is wrong with the value. A word that is an option of the command is left alone."""
    command = next((a.choices.get(name) for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction)), None)
    if command is None:
        return argv
    options = {o for a in command._actions for o in a.option_strings}
    takes_value = {o for a in command._actions if a.option_strings and a.nargs is None for o in a.option_strings}
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return out + argv[i:]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if (word in takes_value and nxt and nxt.startswith("-") and not nxt.startswith("--")
                and nxt not in options):
            out.append(f"{word}={nxt}")
            i += 2
            continue
        out.append(word)
        i += 1
    return out


def build_parser(argv):
    from abound import __version__
    parser = _Parser(
        prog=PROG,
        description="abound: balls bouncing under constant gravity, resolved exactly.",
        epilog=f"Run '{PROG} <command> --help' for a command's options.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    name = _chosen(argv)
    if name:
        parser.help_command = f"{PROG} {name}"  # e.g. unrecognized arguments after the command
    module = problem = None
    for cmd, text in COMMANDS.items():
        p = sub.add_parser(cmd, help=text, description=text)
        if cmd == name:
            module, problem = _load(cmd)
            if module is not None:
                module.add_arguments(p)
            else:
                # accept anything, then report why the command cannot run
                p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser, module, problem


def main(argv=None):
    """Run the ``abound`` command; returns the exit status."""
    import warnings
    from abound.errors import BlackHoleWarning, EscapeWarning, JamWarning
    from abound.physics.backends import CompileNotice
    with warnings.catch_warnings():  # (a program that calls main() keeps its own filters after)
        warnings.filterwarnings("ignore", category=CompileNotice)  # the commands say it in their own words
        shown = warnings.showwarning

        def one_line(message, category, *rest, **kw):  # (not Python's file:line and source line)
            if issubclass(category, (BlackHoleWarning, EscapeWarning, JamWarning)):
                print(f"abound: warning: {message}", file=sys.stderr)
            else:
                shown(message, category, *rest, **kw)
        warnings.showwarning = one_line
        return _main(argv)


def _main(argv):
    argv = list(sys.argv[1:] if argv is None else argv)
    from abound.errors import SceneError
    from abound.cli.outputs import OutputError
    try:
        parser, module, problem = build_parser(argv)
        if problem is not None:
            return _fail(problem)
        args = parser.parse_args(_join_dashed_values(parser, _chosen(argv), argv))
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        return int(module.run(args) or 0)
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else _fail(code))
    except (SceneError, OutputError) as exc:
        return _fail(exc)
    except BrokenPipeError:  # e.g. `abound bench | head -3`: the reader left, not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
