"""appliance: an offline troubleshooting agent for one machine.

A small local GGUF model runs a ReAct loop over read-only diagnostic tools; every step is
recorded in SQLite. The package is layered: tools -> llm -> agent -> store -> tui/cli, each
layer importing only those below it, so the core runs (and is tested) without the UI.
"""

__version__ = "0.1.0"
