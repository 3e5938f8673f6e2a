"""HTTP to one model server, with the standard library, and every failure as one line.

Why `http.client` and `ssl` rather than a client library: the appliance must contact only the host
its catalog entry names, and the standard library does exactly that — it follows no redirects,
reads no proxy variables, and opens a connection only to the host and port it is given — whereas
`urllib.request`, `requests` and `httpx` honour $HTTP(S)_PROXY and follow redirects by default. It
also streams a response line by line, which is all server-sent events need, and adds no dependency.
TLS is always verified (`ssl.create_default_context`), against the site's CA file when one is given.

`timeout` bounds the whole request, not each read: a server that trickles keep-alive comments or
spaces forever resets every per-read timeout, so a timer shuts the socket down at the deadline
(`_Deadline`), and no line of a reply may grow past MAX_LINE_BYTES.

The API key goes only into the Authorization header; no message here ever contains a header.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
from typing import Any, Generator, Iterator

from appliance.errors import ModelError, terminal_safe
from appliance.llm.remotes import Endpoint


MAX_LINE_BYTES = 1 << 20  # one server-sent line (an event's JSON); a longer one is a broken server


class RemoteError(ModelError):
    """The model server could not be used; the message is the one line to show."""


class _Deadline:
    """Ends one request `seconds` after it began, however slowly the server trickles bytes: a timer
    shuts the connection's socket down, so a blocked read returns at once (`expired` says why)."""

    RETRY = 0.05  # the socket may not exist yet (still connecting): look again this soon

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self.connection = connection
        self.sock: socket.socket | None = None  # http.client lets go of it once a reply will close
        self.expired = threading.Event()
        self._done = threading.Event()
        self._arm(seconds)

    def _arm(self, seconds: float) -> None:
        timer = threading.Timer(seconds, self._cut)
        timer.daemon = True
        timer.start()

    def _cut(self) -> None:
        if self._done.is_set():
            return
        self.expired.set()
        sock = self.sock or self.connection.sock
        if sock is None:
            self._arm(self.RETRY)
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def cancel(self) -> None:
        self._done.set()


class HttpClient:
    """Requests to one endpoint; a fresh connection each (a LAN round trip costs nothing next to
    a generation, and a connection the server dropped between two steps is never reused)."""

    def __init__(self, endpoint: Endpoint, *, api_key: str | None = None, ca_file: str = "",
                 timeout: float = 120.0) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._api_key = api_key
        self._tls = ssl.create_default_context(cafile=ca_file or None) if endpoint.scheme == "https" else None

    def __repr__(self) -> str:  # never the key
        return f"HttpClient({self.endpoint.url})"

    def _connection(self) -> http.client.HTTPConnection:
        e = self.endpoint
        if self._tls is not None:
            return http.client.HTTPSConnection(e.host, e.port, timeout=self.timeout, context=self._tls)
        return http.client.HTTPConnection(e.host, e.port, timeout=self.timeout)

    def _headers(self, body: bool) -> dict[str, str]:
        headers = {"Accept": "text/event-stream, application/json"}
        if body:
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _send(self, method: str, route: str, body: dict | None) -> tuple[http.client.HTTPConnection, Any, _Deadline]:
        """One request on a fresh connection. A server that closed the connection before any byte
        of a reply (seen with a loaded test server) produced nothing, so a GET goes once more; a POST
        never does: the server may have worked on it all along (a hung server asked twice costs twice
        its hang), and a generation is not a request to repeat behind the person's back."""
        path = self.endpoint.base_path + route
        payload = json.dumps(body).encode("utf-8") if body is not None else None
        dropped: BaseException | None = None
        while True:
            connection = self._connection()
            deadline = _Deadline(connection, self.timeout)
            try:
                connection.request(method, path, body=payload, headers=self._headers(body is not None))
                deadline.sock = connection.sock
                response = connection.getresponse()
                break
            except BaseException as exc:
                deadline.cancel()
                connection.close()
                if deadline.expired.is_set():
                    raise self.translate(TimeoutError()) from None
                if dropped is None and method == "GET" and isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError)):
                    dropped = exc
                    continue
                raise self.translate(dropped or exc) from None  # a server gone since says so first
        if response.status >= 300:
            detail = self._error_detail(response)
            deadline.cancel()
            connection.close()
            raise self._status_error(response.status, path, detail, response.getheader("Location"))
        return connection, response, deadline

    def get_json(self, route: str) -> Any:
        connection, response, deadline = self._send("GET", route, None)
        try:
            raw = response.read(MAX_LINE_BYTES + 1)
            self._check_whole(deadline, raw)
            return self._json(raw)
        except RemoteError:
            raise
        except BaseException as exc:
            raise self._late(deadline) if deadline.expired.is_set() else self.translate(exc) from None
        finally:
            deadline.cancel()
            connection.close()

    def stream(self, route: str, body: dict) -> Generator[Any, None, None]:
        """POST `body` and yield each server-sent event's JSON payload until `[DONE]` or the end of
        the response. Closing the generator closes the connection (the server stops generating)."""
        connection, response, deadline = self._send("POST", route, body)
        try:
            if "text/event-stream" not in (response.getheader("Content-Type") or ""):
                raw = response.read(MAX_LINE_BYTES + 1)  # a server that answered without streaming
                self._check_whole(deadline, raw)
                yield self._json(raw)
                return
            for data in _events(response, self.endpoint.label):
                if deadline.expired.is_set():
                    break
                if data == "[DONE]":
                    return
                yield self._json(data.encode("utf-8"))
            if deadline.expired.is_set():
                raise self._late(deadline)
        except (RemoteError, GeneratorExit):
            raise
        except BaseException as exc:
            raise self._late(deadline) if deadline.expired.is_set() else self.translate(exc, mid_reply=True) from None
        finally:
            deadline.cancel()
            connection.close()

    def _late(self, deadline: _Deadline) -> RemoteError:
        return RemoteError(f"the model server at {self.endpoint.label} did not finish its reply within "
                           f"{self.timeout:g} s (--timeout bounds the whole request)")

    def _check_whole(self, deadline: _Deadline, raw: bytes) -> None:
        """A reply read in one piece: cut by the deadline, or longer than any real reply."""
        if deadline.expired.is_set():
            raise self._late(deadline)
        if len(raw) > MAX_LINE_BYTES:
            raise RemoteError(f"the model server at {self.endpoint.label} sent a reply longer than "
                              f"{MAX_LINE_BYTES >> 20} MiB; is this an OpenAI-compatible server?")

    # --- errors as one line ----------------------------------------------------------------------

    def _json(self, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError:
            raise RemoteError(f"the model server at {self.endpoint.label} sent a reply that is not JSON "
                              f"({_excerpt(raw)!r})") from None

    def translate(self, exc: BaseException, *, mid_reply: bool = False) -> BaseException:
        where = f"the model server at {self.endpoint.label}"
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return exc
        if isinstance(exc, ssl.SSLCertVerificationError):
            return RemoteError(f"{where} has a TLS certificate this machine does not trust "
                               f"({exc.verify_message}); give the site's CA with --ca-file")
        if isinstance(exc, ssl.SSLError):
            return RemoteError(f"TLS with {where} failed ({exc.reason or exc}); is it really https?")
        if isinstance(exc, socket.gaierror):
            return RemoteError(f"cannot find the model server's host {self.endpoint.host!r} ({exc.strerror})")
        if isinstance(exc, ConnectionRefusedError):
            return RemoteError(f"cannot reach {where}: connection refused (is the server running?)")
        if isinstance(exc, (TimeoutError, socket.timeout)):
            return RemoteError(f"{where} did not answer within {self.timeout:g} s")
        if isinstance(exc, (http.client.IncompleteRead, http.client.RemoteDisconnected, ConnectionError)):
            when = " in the middle of its reply" if mid_reply else ""
            return RemoteError(f"{where} closed the connection{when} (did it stop or crash?)")
        if isinstance(exc, (OSError, http.client.HTTPException)):
            return RemoteError(f"cannot talk to {where}: {exc.__class__.__name__}: {exc}")
        return exc

    @staticmethod
    def _error_detail(response: Any) -> str:
        try:
            raw = response.read(4096)
        except (OSError, http.client.HTTPException):
            return ""
        try:
            error = json.loads(raw)
        except ValueError:
            return _excerpt(raw)
        if isinstance(error, dict):
            inner = error.get("error", error.get("detail", error))
            if isinstance(inner, dict):
                inner = inner.get("message", inner)
            return _excerpt(str(inner).encode())
        return _excerpt(raw)

    def _status_error(self, status: int, path: str, detail: str, location: str | None) -> RemoteError:
        where = f"the model server at {self.endpoint.label}"
        said = f": {detail}" if detail else ""
        if status in (401, 403):
            how = "refused the API key" if self._api_key else "wants an API key (add one with --api-key-env)"
            return RemoteError(f"{where} {how} (HTTP {status})")
        if status == 404:
            return RemoteError(f"{where} has no {path} (HTTP 404); check the URL{said}")
        if 300 <= status < 400:
            return RemoteError(f"{where} redirects to {location or 'elsewhere'} (HTTP {status}); not followed: "
                               "give the final URL")
        return RemoteError(f"{where} answered HTTP {status}{said}")


def _events(response: Any, label: str) -> Iterator[str]:
    """The `data:` payloads of a server-sent event stream (comments and pings skipped). A line
    longer than MAX_LINE_BYTES (spaces without end) is an error, not memory to grow into."""
    lines: list[str] = []
    while True:
        raw = response.readline(MAX_LINE_BYTES + 1)
        if len(raw) > MAX_LINE_BYTES:
            raise RemoteError(f"the model server at {label} sent a line longer than {MAX_LINE_BYTES >> 20} MiB "
                              "without an end; is this an OpenAI-compatible server?")
        if not raw:
            if lines:
                yield "\n".join(lines)
            return
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
        elif line.startswith("data:"):
            lines.append(line[5:].lstrip(" "))


def _excerpt(raw: bytes, limit: int = 160) -> str:
    """A server's words as one line a terminal shows as they are (no control sequences)."""
    text = " ".join(terminal_safe(raw.decode("utf-8", errors="replace")).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
