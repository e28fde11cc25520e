"""No import cycle among app modules, at module level.

import-linter's acyclic_siblings contract (pyproject.toml) checks the children of each
package; this also catches a package's __init__ and one of its own submodules importing
each other (the __init__ importing its submodules alone is no cycle)."""
from __future__ import annotations

from tests.support.strict import need_module

grimp = need_module("grimp", "import-linter brings it: the test extra")


def strongly_connected(nodes: list[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module (the cycles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "pkg": {"pkg.x"}, "pkg.x": set()}
    assert strongly_connected(sorted(edges), edges) == [["a", "b", "c"]]


def test_no_cycles_among_app_modules():
    graph = grimp.build_graph("app", cache_dir=None)      # no cache folder left in the repo
    nodes = sorted(m for m in graph.modules if m == "app" or m.startswith("app."))
    ours = set(nodes)
    edges = {m: graph.find_modules_directly_imported_by(m) & ours for m in nodes}
    cycles = strongly_connected(nodes, edges)
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
