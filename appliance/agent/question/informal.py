"""Questions as people type them, put into the spelling the word reader knows.

Why: people type "whats wrong", "cant", "dont", "u", "pls" and curly apostrophes; a reader written
against "what's wrong" and "can't" misses every such question, and plain complaints are exactly the
ones typed that way. Only whole words are rewritten, so paths, names and ports are untouched (and
those are taken from the question as written anyway).
"""

from __future__ import annotations

import re

# Contractions typed without their apostrophe, and the common chat shorthands (no single letters
# but "u": "y", "n" and "r" are as often options, answers or names).
_WORDS: dict[str, str] = {
    "whats": "what's", "thats": "that's", "whos": "who's", "wheres": "where's", "hows": "how's",
    "theres": "there's", "heres": "here's", "whys": "why's", "whats'": "what's",
    "cant": "can't", "wont": "won't", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't",
    "isnt": "isn't", "arent": "aren't", "wasnt": "wasn't", "werent": "weren't", "havent": "haven't",
    "hasnt": "hasn't", "hadnt": "hadn't", "couldnt": "couldn't", "shouldnt": "shouldn't",
    "wouldnt": "wouldn't", "aint": "ain't", "im": "I'm", "ive": "I've", "youre": "you're",
    "u": "you", "ur": "your", "pls": "please", "plz": "please", "thx": "thanks", "cuz": "because",
    "wat": "what", "wut": "what", "tho": "though", "thru": "through",
}
_WORD = re.compile(r"(?<![\w/.'-])(" + "|".join(sorted(map(re.escape, _WORDS), key=len, reverse=True)) + r")(?![\w/'-])",
                   re.I)
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def _spelled(match: re.Match) -> str:
    word = match.group(1)
    full = _WORDS[word.lower()]
    return full[0].upper() + full[1:] if word[0].isupper() and full[0].isalpha() else full


# "log in", "log on", "log out" as a verb ("ssh is slow to log in", "I can't log on"): one word, so that
# no reader takes it for a log; "the log in /var/log/app" (a determiner before it) is a log.
_LOG_VERB = re.compile(r"\b(?:(\w+)\s+)?(log)s?\s+(in|on|out)(?:to)?\b", re.I)
_DETERMINERS = frozenset("the a an this that my your our their its each every which what any one no".split())


def _log_verb(match: re.Match) -> str:
    before = match.group(1)
    if before is not None and before.lower() in _DETERMINERS:
        return match.group(0)
    return (f"{before} " if before else "") + match.group(2) + match.group(3)


# How often a symptom comes, said with the word "time": no question about the clock ("the drive
# grinds all the time" is about the drive; the clock's readers know "time" as the clock's word).
_OFTEN = {"all the time": "constantly", "the whole time": "constantly", "every single time": "whenever",
          "every time": "whenever", "from time to time": "sometimes", "some of the time": "sometimes",
          "most of the time": "mostly", "time after time": "again and again", "at the same time": "together",
          "half the time": "often", "each time": "whenever"}
_OFTEN_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _OFTEN), key=len, reverse=True)) + r")\b", re.I)


def as_typed(text: str) -> str:
    """The question with its informal spellings written out ("whats wrong" → "what's wrong"),
    "log in" as the verb it is ("login"), and "all the time" as the frequency it is ("constantly")."""
    spelled = _LOG_VERB.sub(_log_verb, _WORD.sub(_spelled, text.translate(_QUOTES)))
    return _OFTEN_RE.sub(lambda m: _OFTEN[m.group(1).lower()], spelled)
