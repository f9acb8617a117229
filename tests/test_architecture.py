"""The house plan holds in code: layer contracts (import-linter), no module over 600 lines, no
private name imported from another package, imports inside functions only with a reason."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pbmserv"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def test_the_layer_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed")
    result = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "broken" in result.stdout and "0 broken" in result.stdout


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_600_lines(path: Path):
    assert len(path.read_text().splitlines()) <= 600


def test_no_private_name_is_imported_from_another_package():
    offences = []
    for path in MODULES:
        module = _name(path)
        here = _package(module, path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pbmserv"):
                source = node.module or ""
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    private = alias.name.startswith("_") or any(
                        part.startswith("_") and part != "__init__" for part in source.split(".")
                    )
                    if private and source.rpartition(".")[0] != here and source != here:
                        offences.append(f"{module}: {target}")
    assert offences == []


def test_imports_inside_functions_say_why():
    """Only where start-up time needs them, each with ``# lazy: <reason>``."""
    offences = []
    for path in MODULES:
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    text = "\n".join(lines[node.lineno - 1 : (node.end_lineno or node.lineno)])
                    if "# lazy:" not in text:
                        offences.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offences == []


def test_no_import_cycles():
    grimp = pytest.importorskip("grimp")
    import networkx as nx

    graph = grimp.build_graph("pbmserv", exclude_type_checking_imports=True)
    edges = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    assert list(nx.simple_cycles(edges)) == []


def test_the_shell_only_words_are_the_operator_commands():
    """A mail names an operator command as such ('it runs only in a shell on the server') by
    the words of ``SHELL_ONLY``, kept in the commands layer, which cannot import the shell's
    commands: the two lists must not drift apart."""
    import click

    from pbmserv.cli.operator import OPERATOR_COMMANDS
    from pbmserv.commands.registry import OPERATOR
    from pbmserv.commands.tree import SHELL_ONLY

    assert {command.name for command in OPERATOR_COMMANDS} == set(SHELL_ONLY)

    def words(command: click.Command) -> dict:  # its sub-commands, word by word
        subs = command.commands if isinstance(command, click.Group) else {}
        return {name: words(sub) for name, sub in subs.items()}

    # (a mail that names one shows these words as typed: they must be the commands' own)
    assert {command.name: words(command) for command in OPERATOR_COMMANDS} == OPERATOR
