"""What an answer repeats: another text (the prompt's example, a refusal, a note), the question
itself, or an answer already refused in other spacing.

Why a leaf of its own: the answer check and the steering both ask it, and it reads only words;
below them and importing no answer module, it keeps the answer path flat (issue 31).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Iterable


def _norm_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def copies(answer: str, texts: Iterable[str], run: int = 5) -> bool:
    """True when the answer repeats one of `texts` (the prompt's example answer, an earlier
    rejection, a note): the whole answer is inside one of them, or `run` words in a row are.
    SmolLM2 answered with the rejection message itself; Qwen 0.5B with the worked example."""
    words = _norm_words(answer)
    if not words:
        return False
    for text in texts:
        other = " ".join(_norm_words(text))
        if not other:
            continue
        if len(words) < run:
            if len(words) >= 3 and " ".join(words) in other:
                return True
            continue
        if any(" ".join(words[i : i + run]) in other for i in range(len(words) - run + 1)):
            return True
    return False


_SAYS_SO = frozenset({"yes", "no", "not", "none", "nothing", "nobody", "never"})


def restates(answer: str, question: str) -> bool:
    """The answer is the question again: four fifths of the question's words in a row, and besides
    them no path or number, no yes or no, and at most one word in eight of four letters or more.
    A small model answered "which log is ballooning?" with the question itself, a word added."""
    said, asked = _norm_words(answer), _norm_words(question)
    if len(asked) < 5 or _longest_run(said, asked) < 0.8 * len(asked):
        return False
    if any(p not in question for p in re.findall(r"/[\w.@+-]+(?:/[\w.@+-]+)*", answer)) \
            or any(w.isdigit() and w not in asked for w in said):
        return False
    known = set(asked)
    new = {w for w in said if w not in known and (len(w) > 3 or w in _SAYS_SO)}
    return not _SAYS_SO & new and len([w for w in said if w in new]) <= max(1, len(said) // 8)


def _longest_run(words: list[str], other: list[str]) -> int:
    """The most words of `other` that `words` holds in a row, in the same order."""
    return SequenceMatcher(None, words, other, autojunk=False).find_longest_match(0, len(words), 0, len(other)).size


def normalized(answer: str) -> str:
    """An answer in a form where retyped spacing or case does not make it new."""
    return " ".join(_norm_words(answer))
