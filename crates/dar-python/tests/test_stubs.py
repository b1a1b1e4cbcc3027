"""dar.pyi (what editors complete) says what the module has, and the module
documents what it has."""

import ast
import inspect
from pathlib import Path

import dar

STUB = Path(__file__).resolve().parents[1] / "dar.pyi"
# Dunder methods that are part of the API (protocols other libraries call).
PROTOCOL_METHODS = {"__arrow_c_stream__", "__datafusion_table_provider__"}


def stub_api() -> dict:
    """{class name: {member names}} and {"": {module-level names}} from dar.pyi."""
    api = {"": set()}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef):
            api[""].add(node.name)
            api[node.name] = {
                n.name
                for n in node.body
                if isinstance(n, ast.FunctionDef) and n.name != "__init__"
            }
        elif isinstance(node, ast.FunctionDef):
            api[""].add(node.name)
        elif isinstance(node, ast.AnnAssign):
            api[""].add(node.target.id)
    return api


def runtime_api() -> dict:
    api = {"": {n for n in dir(dar) if not n.startswith("_") or n == "__version__"}}
    api[""] -= {"dar"}  # the extension module's own name, added by the import system
    for name in api[""]:
        obj = getattr(dar, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            api[name] = {
                n
                for n in vars(obj)
                if not n.startswith("_") or n in PROTOCOL_METHODS
            }
        elif inspect.isclass(obj):
            api[name] = set()
    return api


def test_the_stub_matches_the_module():
    assert stub_api() == runtime_api()


def test_everything_public_has_a_docstring():
    for name, members in runtime_api().items():
        if not name:
            for function in members:
                obj = getattr(dar, function)
                if callable(obj) and not inspect.isclass(obj):
                    assert (obj.__doc__ or "").strip(), function
            continue
        cls = getattr(dar, name)
        assert (cls.__doc__ or "").strip(), name
        for member in members:
            assert (getattr(cls, member).__doc__ or "").strip(), f"{name}.{member}"
