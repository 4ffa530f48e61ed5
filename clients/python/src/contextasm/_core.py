"""What the sync and async clients share: each call as a method, a path
and a body, and each answer decoded or raised as a ContextasmError."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlencode, urlsplit

from ._types import Citation, Declaration, Format, Usage

DEFAULT_URL = "http://127.0.0.1:7411"


class ContextasmError(Exception):
    """A failure the server reported: its HTTP status and the error body's
    code (for a program to branch on), message, field and problems."""

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None,
                 problems: Optional[List[Dict[str, Any]]] = None,
                 required: Optional[List[Dict[str, Any]]] = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.problems = problems or []
        self.required = required or []


@dataclass(frozen=True)
class Call:
    """One request: method, path (query included) and JSON body."""

    method: str
    path: str
    body: Optional[bytes] = None


@dataclass(frozen=True)
class Endpoint:
    """Where a server listens: host and port, or a Unix socket."""

    host: str
    port: int
    socket: Optional[str] = None


def endpoint(base_url: str) -> Endpoint:
    """Reads http://host:port or unix:/path/to.sock."""
    if base_url.startswith("unix:"):
        path = base_url[len("unix:"):]
        if path.startswith("//"):
            path = path[2:]
        return Endpoint("localhost", 0, path)
    u = urlsplit(base_url)
    if u.scheme != "http" or not u.hostname:
        raise ValueError(f"base_url {base_url!r}: want http://host:port or unix:/path")
    return Endpoint(u.hostname, u.port or 80)


def _json(v: Any) -> bytes:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode()


def declare(declarations: Sequence[Declaration], replace_prefix: Optional[str]) -> Call:
    path = "/v1/declarations"
    if replace_prefix is not None:
        path += "?" + urlencode({"replace_prefix": replace_prefix})
    return Call("POST", path, _json(list(declarations)))


def forget(request_id: str) -> Call:
    return Call("DELETE", "/v1/declarations/" + quote(request_id, safe=""))


def forget_prefix(prefix: str) -> Call:
    return Call("DELETE", "/v1/declarations?" + urlencode({"prefix": prefix}))


def assemble(template: Union[str, Mapping[str, Any]], session: Optional[str], user: Optional[str],
             roles: Optional[Sequence[str]], now: Optional[str], format: Optional[Format], fresh: bool,
             budget: Optional[int], dump: bool, blocks: bool, query: Optional[str] = None, no_query: bool = False,
             relevance: Optional[Mapping[str, float]] = None) -> Call:
    body: Dict[str, Any] = {"template": template}
    for k, v in (("session", session), ("user", user), ("now", now), ("format", format), ("budget", budget),
                 ("query", query)):
        if v is not None:
            body[k] = v
    if roles is not None:
        body["roles"] = list(roles)
    if relevance is not None:
        body["relevance"] = dict(relevance)
    for k, flag in (("fresh", fresh), ("no_query", no_query), ("dump", dump), ("blocks", blocks)):
        if flag:
            body[k] = True
    return Call("POST", "/v1/assemble", _json(body))


def feedback(assembly_id: str, response: str, cited: Optional[Sequence[Citation]], usage: Optional[Usage]) -> Call:
    body: Dict[str, Any] = {"assembly_id": assembly_id, "response": response}
    if cited:
        body["cited"] = list(cited)
    if usage:
        body["usage"] = dict(usage)
    return Call("POST", "/v1/feedback", _json(body))


def end_session(session: str) -> Call:
    return Call("POST", "/v1/sessions/" + quote(session, safe="") + "/end")


def count(text: Optional[str], texts: Optional[Sequence[str]], encoding: Optional[str]) -> Call:
    body: Dict[str, Any] = {}  # the server says what is missing or too much
    if encoding is not None:
        body["encoding"] = encoding
    if text is not None:
        body["text"] = text
    if texts is not None:
        body["texts"] = list(texts)
    return Call("POST", "/v1/count", _json(body))


def assembly(assembly_id: str) -> Call:
    return Call("GET", "/v1/assemblies/" + quote(assembly_id, safe=""))


def headers(api_key: Optional[str], body: Optional[bytes]) -> Dict[str, str]:
    h = {"Accept": "application/json", "User-Agent": "contextasm-python/0.1"}
    if body is not None:
        h["Content-Type"] = "application/json"
        h["Content-Length"] = str(len(body))
    if api_key:
        h["Authorization"] = "Bearer " + api_key
    return h


def decode(status: int, raw: bytes) -> Any:
    """Returns the body of a success; raises the error of a failure."""
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        raise ContextasmError(status, "not_json", raw[:200].decode(errors="replace")) from None
    if 200 <= status < 300:
        return body
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        raise ContextasmError(status, "unknown", str(body)[:200])
    raise ContextasmError(status, str(err.get("code", "unknown")), str(err.get("message", "")), err.get("field"),
                          err.get("problems"), err.get("required"))


def parse_status_line(line: bytes) -> Tuple[int, str]:
    parts = line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ConnectionError(f"not an HTTP response: {line[:80]!r}")
    return int(parts[1]), parts[2].strip() if len(parts) > 2 else ""
