"""Pull one string field (the "thought") out of a JSON object while it is still being generated.

The model streams raw JSON (`{"thought": "the fan is loud because", "action": ...`). A person wants
to read the thought as it is written, not the braces, so this tiny state machine walks the pieces
as they arrive and hands back only the newly decoded characters of the wanted top-level string
value. It copes with pieces split anywhere, including inside an escape such as `\\u00e9`, and
never raises on malformed input (it just stops producing text).
"""

from __future__ import annotations

_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class FieldStream:
    """Feed raw JSON pieces; get back the new text of top-level string field `name`."""

    def __init__(self, name: str = "thought") -> None:
        self.name = name
        self.text = ""  # everything of the field decoded so far
        self._depth = 0
        self._in_string = False
        self._escape: str | None = None  # characters after a backslash, while incomplete
        self._high_surrogate: str | None = None
        self._expect_key = False  # at depth 1, the next string is a key
        self._key = ""  # the key being read (depth 1 only)
        self._capturing_key = False
        self._last_key = ""
        self._value_wanted = False  # the next value belongs to the wanted key
        self._emitting = False  # inside the wanted string value
        self._done = False

    @property
    def done(self) -> bool:
        """True once the wanted value has been read to its closing quote."""
        return self._done

    def feed(self, piece: str) -> str:
        out: list[str] = []
        for ch in piece:
            if self._in_string:
                decoded = self._string_char(ch)
                if decoded is None:
                    continue
                if self._emitting:
                    out.append(decoded)
                elif self._capturing_key:
                    self._key += decoded
                continue
            self._structure_char(ch)
        new = "".join(out)
        self.text += new
        return new

    def _string_char(self, ch: str) -> str | None:
        """Decode one character inside a string; None when nothing is produced yet."""
        if self._escape is not None:
            self._escape += ch
            return self._finish_escape()
        if ch == "\\":
            self._escape = ""
            return None
        if ch == '"':
            self._close_string()
            return None
        return ch

    def _finish_escape(self) -> str | None:
        esc = self._escape or ""
        if esc[0] != "u":
            self._escape = None
            return _SIMPLE_ESCAPES.get(esc[0], esc[0])
        if len(esc) < 5:
            return None
        self._escape = None
        try:
            code = int(esc[1:5], 16)
        except ValueError:
            return ""
        if 0xD800 <= code <= 0xDBFF:
            self._high_surrogate = chr(code)
            return None
        if 0xDC00 <= code <= 0xDFFF and self._high_surrogate:
            pair = self._high_surrogate + chr(code)
            self._high_surrogate = None
            return pair.encode("utf-16", "surrogatepass").decode("utf-16")
        return chr(code)

    def _close_string(self) -> None:
        self._in_string = False
        if self._emitting:
            self._emitting = False
            self._done = True
        elif self._capturing_key:
            self._capturing_key = False
            self._last_key = self._key

    def _structure_char(self, ch: str) -> None:
        if ch == '"':
            self._in_string = True
            if self._depth == 1 and self._expect_key:
                self._capturing_key = True
                self._key = ""
                self._expect_key = False
            elif self._depth == 1 and self._value_wanted and not self._done:
                self._emitting = True
                self._value_wanted = False
            return
        if ch in "{[":
            self._depth += 1
            if self._depth == 1 and ch == "{":
                self._expect_key = True
            self._value_wanted = False
        elif ch in "}]":
            self._depth = max(0, self._depth - 1)
        elif ch == ":" and self._depth == 1:
            self._value_wanted = self._last_key == self.name
        elif ch == "," and self._depth == 1:
            self._expect_key = True
            self._value_wanted = False
