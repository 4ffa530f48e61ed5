"""The synchronous client, over the standard library's http.client."""

from __future__ import annotations

import http.client
import socket
import threading
from typing import Any, Mapping, Optional, Sequence, Union, cast

from . import _core
from ._core import DEFAULT_URL, Call
from ._types import (AssembleResponse, AssemblyResponse, Citation, CountResponse, Declaration, DeclareResponse,
                     EndResponse, FeedbackResponse, ForgetResponse, Format, Status, Usage)


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


class Client:
    """A client of contextasm serve. Safe for use by several threads (one
    kept-alive connection, one request at a time).

    base_url is http://host:port or unix:/path/to.sock; api_key is sent as
    a bearer token (a server without keys takes none).
    """

    def __init__(self, base_url: str = DEFAULT_URL, api_key: Optional[str] = None, timeout: float = 30.0) -> None:
        self._endpoint = _core.endpoint(base_url)
        self._key = api_key
        self._timeout = timeout
        self._lock = threading.Lock()
        self._conn: Optional[http.client.HTTPConnection] = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            e = self._endpoint
            if e.socket is not None:
                self._conn = _UnixConnection(e.socket, self._timeout)
            else:
                self._conn = http.client.HTTPConnection(e.host, e.port, timeout=self._timeout)
        return self._conn

    def _do(self, call: Call) -> Any:
        with self._lock:
            for attempt in (1, 2):
                conn = self._connection()
                try:
                    conn.request(call.method, call.path, body=call.body, headers=_core.headers(self._key, call.body))
                    resp = conn.getresponse()
                    raw = resp.read()
                    status = resp.status
                    if resp.getheader("Connection", "").lower() == "close":
                        conn.close()
                        self._conn = None
                    break
                except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                    # A kept-alive connection the server closed while idle:
                    # open a new one, once. Should the server have acted
                    # on the first attempt after all, the second is safe:
                    # declarations replace themselves, and a second
                    # feedback of one assembly is refused (409).
                    conn.close()
                    self._conn = None
                    if attempt == 2:
                        raise
        return _core.decode(status, raw)

    def declare(self, declarations: Sequence[Declaration], *, replace_prefix: Optional[str] = None) -> DeclareResponse:
        """Declares a batch of blocks, all or nothing; with replace_prefix they
        become the blocks whose request_id starts with it."""
        return cast(DeclareResponse, self._do(_core.declare(declarations, replace_prefix)))

    def forget(self, request_id: str) -> ForgetResponse:
        """Forgets one block (ContextasmError 404 when there is none)."""
        return cast(ForgetResponse, self._do(_core.forget(request_id)))

    def forget_prefix(self, prefix: str) -> ForgetResponse:
        """Forgets every block whose request_id starts with prefix."""
        return cast(ForgetResponse, self._do(_core.forget_prefix(prefix)))

    def assemble(self, template: Union[str, Mapping[str, Any]], *, session: Optional[str] = None,
                 user: Optional[str] = None, roles: Optional[Sequence[str]] = None, now: Optional[str] = None,
                 format: Optional[Format] = None, fresh: bool = False, budget: Optional[int] = None,
                 dump: bool = False, blocks: bool = False, query: Optional[str] = None, no_query: bool = False,
                 relevance: Optional[Mapping[str, float]] = None) -> AssembleResponse:
        """Assembles a context: template by name or inline; roles narrow the
        key's (None: all of them); now is RFC 3339 (None: the server's clock).
        query is what the call is about (None: the session's newest user
        turn), no_query ranks without relevance, relevance is a retriever's
        scores by request_id from 0 to 1; at most one of the three."""
        return cast(AssembleResponse, self._do(_core.assemble(template, session, user, roles, now, format, fresh,
                                                              budget, dump, blocks, query, no_query, relevance)))

    def feedback(self, assembly_id: str, response: str = "", *, cited: Optional[Sequence[Citation]] = None,
                 usage: Optional[Usage] = None) -> FeedbackResponse:
        """Learns from the model's response to an assembly, once."""
        return cast(FeedbackResponse, self._do(_core.feedback(assembly_id, response, cited, usage)))

    def end_session(self, session: str) -> EndResponse:
        """Releases a session's blocks, decisions and retained assemblies."""
        return cast(EndResponse, self._do(_core.end_session(session)))

    def count(self, text: Optional[str] = None, *, texts: Optional[Sequence[str]] = None,
              encoding: Optional[str] = None) -> CountResponse:
        """Counts the tokens of a text, or of each of several."""
        return cast(CountResponse, self._do(_core.count(text, texts, encoding)))

    def assembly(self, assembly_id: str) -> AssemblyResponse:
        """The dump of a retained assembly."""
        return cast(AssemblyResponse, self._do(_core.assembly(assembly_id)))

    def healthz(self) -> Status:
        return cast(Status, self._do(Call("GET", "/healthz")))

    def readyz(self) -> Status:
        return cast(Status, self._do(Call("GET", "/readyz")))
