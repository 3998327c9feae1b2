"""The engine's kernels compute the same floats in Python as compiled.

The reference backend runs the kernels as Python, the fast one compiles the
same source with numba (abound/physics/_jit.py), and both must give the same
result bit for bit. Plain + - * / and math.sqrt are correctly rounded in
both; the power operator is not: CPython's x ** 2 calls the C library's
pow(), which is off by one unit in the last place for about one float in a
thousand, where numba multiplies x * x. A ** in a kernel made the engines
part in round-off within 30 steps of the Galton board (contact clusters,
issue 23). This test keeps it out.
"""
import ast
import random
from pathlib import Path

PHYSICS = Path(__file__).resolve().parents[2] / "abound" / "physics"
DECORATORS = {"kernel", "inlined", "allocating"}


def _kernels():
    for path in sorted(PHYSICS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id in DECORATORS for d in node.decorator_list):
                yield path.name, node


def test_the_premise_python_squares_differ_from_products():
    # what the rule guards against, measured on this interpreter
    rng = random.Random(1)
    xs = [rng.uniform(-1000.0, 1000.0) for _ in range(100_000)]
    assert sum(x ** 2 != x * x for x in xs) > 0


def test_no_kernel_uses_the_power_operator():
    kernels = list(_kernels())
    assert len(kernels) > 50  # the walk found the engine
    uses = [f"{name}:{node.name}:{sub.lineno}" for name, node in kernels for sub in ast.walk(node)
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Pow)
            or isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("pow", "hypot")]
    assert uses == [], "write x * x (or math.sqrt(x * x + y * y)): " + ", ".join(uses)
