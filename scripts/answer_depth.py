"""The answer path's import depth inside appliance/agent/: the longest chain of imports from the
finish path (agent/finishing.py) through agent modules, measured with grimp (the library
import-linter uses). Issue 31 asks for at most 4 modules.

    .venv/bin/python scripts/answer_depth.py [START]
"""

from __future__ import annotations

import functools
import sys

import grimp


def main(argv: list[str]) -> int:
    start = argv[1] if len(argv) > 1 else "appliance.agent.finishing"
    graph = grimp.build_graph("appliance")

    def inside(module: str) -> bool:
        return module.startswith("appliance.agent.") and not module.endswith("__init__")

    @functools.cache
    def longest(module: str) -> tuple[str, ...]:
        below = [longest(m) for m in graph.find_modules_directly_imported_by(module) if inside(m)]
        return (module, *max(below, key=len, default=()))

    chain = longest(start)
    print(f"{len(chain)} modules deep: " + " -> ".join(m.removeprefix("appliance.agent.") for m in chain))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
