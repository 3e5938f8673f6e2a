"""The answer path's import depth: the longest chain of imports from the finish path
(agent/finishing.py) through the answer path's modules (agent/answer/*), and, for comparison,
through every agent module (the question's reading and the evidence below it), measured with grimp
(the library import-linter uses). Issue 31 asks for at most 4 modules on the answer path.

    .venv/bin/python scripts/answer_depth.py [START]
"""

from __future__ import annotations

import functools
import sys

import grimp


def main(argv: list[str]) -> int:
    start = argv[1] if len(argv) > 1 else "appliance.agent.finishing"
    graph = grimp.build_graph("appliance")

    def chain_within(prefix: str) -> tuple[str, ...]:
        @functools.cache
        def longest(module: str) -> tuple[str, ...]:
            below = [longest(m) for m in graph.find_modules_directly_imported_by(module)
                     if m.startswith(prefix) and not m.endswith("__init__")]
            return (module, *max(below, key=len, default=()))
        return longest(start)

    for name, prefix in (("answer path", "appliance.agent.answer."), ("all of agent/", "appliance.agent.")):
        chain = chain_within(prefix)
        print(f"{name}: {len(chain)} modules deep: " + " -> ".join(m.removeprefix("appliance.agent.") for m in chain))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
