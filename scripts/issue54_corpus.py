#!/usr/bin/env python3
"""Issue 54's corpus (tests/support/secret_issue54.py) through the redactor as each tool calls it:
command lines word by word (`show_argv`), cron commands (`shown_command`), files, logs and histories
(`redact`); prints every leak, every masked near-miss and the counts. The same corpus runs through
the real tools, as real processes and files, in tests/test_redact_issue54.py.

    .venv/bin/python scripts/issue54_corpus.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support import secret_issue54 as corpus  # noqa: E402
from appliance.tools.redact import redact  # noqa: E402
from appliance.tools.redaction.cmdline import show_argv  # noqa: E402
from appliance.tools.shown import shown_command  # noqa: E402


def main() -> int:
    shown: list[tuple[str, list[str], str]] = []
    shown += [(argv[0], secrets, show_argv(argv)) for _, argv, secrets in corpus.command_shapes()]
    shown += [(fmt, secrets, redact(text)) for fmt, _, text, secrets in corpus.file_shapes()]
    shown += [("cron", [secret], shown_command(line.split(" ", 6)[6], 400)) for line, secret in corpus.cron_lines()]
    shown += [(fmt, [secret], redact(line)) for fmt, line, secret in corpus.logged_lines()]
    shapes = sum(len(secrets) for _, secrets, _ in shown)
    leaks = [(where, text) for where, secrets, text in shown for secret in secrets if secret[:7] in text]
    for where, text in leaks:
        print(f"  leak ({where}): {text}")
    masked = [text for text in corpus.NEAR_MISSES if redact(text) != text]
    for text in masked:
        print(f"  near-miss masked: {redact(text)}")
    print(f"{shapes} secret shapes: {len(leaks)} leaks; {len(corpus.NEAR_MISSES)} near-miss non-secrets: "
          f"{len(masked)} masked ({100 * len(masked) / len(corpus.NEAR_MISSES):.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
