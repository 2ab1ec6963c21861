"""No import cycle anywhere in ``eagle_tui``, counting imports under ``TYPE_CHECKING`` and inside
functions (grimp reads every ``import`` statement of a module's syntax tree, which is why a cycle
that the layer contracts cannot see, hidden in a function or a type-only import, is caught here).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import grimp


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    def imported(m: str) -> Iterator[str]:
        return iter(sorted(graph.find_modules_directly_imported_by(m)))

    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, imported(root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, imported(child)))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp: list[str] = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def _path(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """One closed import path through a cycle, each step with the line that imports."""
    first = cycle[0]
    steps = []
    for m in cycle[1:]:
        there = graph.find_shortest_chain(importer=first, imported=m) or ()
        back = graph.find_shortest_chain(importer=m, imported=first) or ()
        if there and back:
            steps = [*there, *back[1:]]
            break
    lines = []
    for a, b in itertools.pairwise(steps):
        details = graph.get_import_details(importer=a, imported=b)
        d = details[0] if details else {"line_number": "?", "line_contents": ""}
        lines.append(f"  {a} -> {b}  (line {d['line_number']}: {d['line_contents']})")
    return "\n".join(lines)


def test_no_import_cycle_in_eagle_tui() -> None:
    graph = grimp.build_graph("eagle_tui", cache_dir=None)
    cycles = _cycles(graph)
    report = "\n".join(f"cycle of {len(c)}: {', '.join(c)}\n{_path(graph, c)}" for c in cycles)
    assert not cycles, report


def test_the_graph_counts_type_checking_and_function_imports() -> None:
    """The check would miss the hidden cycles if these imports were not in the graph."""
    graph = grimp.build_graph("eagle_tui", cache_dir=None)
    # (a type-only import: alerts reads the state's type; a function-level one: the demo's
    # launch imports its load when a run starts)
    assert graph.direct_import_exists(importer="eagle_tui.model.views.alerts",
                                      imported="eagle_tui.model.state")
    assert graph.direct_import_exists(importer="eagle_tui.commands.demo_launch",
                                      imported="eagle_tui.commands.demo_load")


def test_a_cycle_is_found_and_its_path_printed() -> None:
    graph = grimp.ImportGraph()
    for m in ("p", "p.a", "p.b", "p.c", "p.d"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b", line_number=3, line_contents="import p.b")
    graph.add_import(importer="p.b", imported="p.c", line_number=4, line_contents="import p.c")
    graph.add_import(importer="p.c", imported="p.a", line_number=9, line_contents="import p.a")
    graph.add_import(importer="p.c", imported="p.d", line_number=5, line_contents="import p.d")
    assert _cycles(graph) == [["p.a", "p.b", "p.c"]]
    path = _path(graph, ["p.a", "p.b", "p.c"])
    assert "p.c -> p.a  (line 9: import p.a)" in path
