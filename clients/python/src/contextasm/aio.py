"""The asyncio client: the same calls as Client, over asyncio's streams
(HTTP/1.1, a connection per request)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Mapping, Optional, Sequence, Union, cast

from . import _core
from ._core import DEFAULT_URL, Call
from ._types import (AssembleResponse, AssemblyResponse, Citation, CountResponse, Declaration, DeclareResponse,
                     EndResponse, FeedbackResponse, ForgetResponse, Format, Status, Usage)


class AsyncClient:
    """A client of contextasm serve for asyncio hosts; safe for many tasks
    at once. base_url and api_key are as for Client."""

    def __init__(self, base_url: str = DEFAULT_URL, api_key: Optional[str] = None, timeout: float = 30.0) -> None:
        self._endpoint = _core.endpoint(base_url)
        self._key = api_key
        self._timeout = timeout

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def _do(self, call: Call) -> Any:
        return await asyncio.wait_for(self._round_trip(call), self._timeout)

    async def _round_trip(self, call: Call) -> Any:
        e = self._endpoint
        if e.socket is not None:
            reader, writer = await asyncio.open_unix_connection(e.socket)
        else:
            reader, writer = await asyncio.open_connection(e.host, e.port)
        try:
            h = _core.headers(self._key, call.body)
            h["Host"] = f"{e.host}:{e.port}" if e.socket is None else "localhost"
            h["Connection"] = "close"
            head = f"{call.method} {call.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
            writer.write(head.encode("latin-1") + (call.body or b""))
            await writer.drain()
            status, _ = _core.parse_status_line(await reader.readline())
            headers: Dict[str, str] = {}
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                k, _, v = line.decode("latin-1").partition(":")
                headers[k.strip().lower()] = v.strip()
            if "content-length" in headers:
                raw = await reader.readexactly(int(headers["content-length"]))
            elif headers.get("transfer-encoding", "").lower() == "chunked":
                raw = await _chunked(reader)
            else:
                raw = await reader.read()
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
        return _core.decode(status, raw)

    async def declare(self, declarations: Sequence[Declaration], *,
                      replace_prefix: Optional[str] = None) -> DeclareResponse:
        return cast(DeclareResponse, await self._do(_core.declare(declarations, replace_prefix)))

    async def forget(self, request_id: str) -> ForgetResponse:
        return cast(ForgetResponse, await self._do(_core.forget(request_id)))

    async def forget_prefix(self, prefix: str) -> ForgetResponse:
        return cast(ForgetResponse, await self._do(_core.forget_prefix(prefix)))

    async def assemble(self, template: Union[str, Mapping[str, Any]], *, session: Optional[str] = None,
                       user: Optional[str] = None, roles: Optional[Sequence[str]] = None, now: Optional[str] = None,
                       format: Optional[Format] = None, fresh: bool = False, budget: Optional[int] = None,
                       dump: bool = False, blocks: bool = False, query: Optional[str] = None,
                       no_query: bool = False, relevance: Optional[Mapping[str, float]] = None) -> AssembleResponse:
        return cast(AssembleResponse, await self._do(_core.assemble(template, session, user, roles, now, format, fresh,
                                                                    budget, dump, blocks, query, no_query, relevance)))

    async def feedback(self, assembly_id: str, response: str = "", *, cited: Optional[Sequence[Citation]] = None,
                       usage: Optional[Usage] = None) -> FeedbackResponse:
        return cast(FeedbackResponse, await self._do(_core.feedback(assembly_id, response, cited, usage)))

    async def end_session(self, session: str) -> EndResponse:
        return cast(EndResponse, await self._do(_core.end_session(session)))

    async def count(self, text: Optional[str] = None, *, texts: Optional[Sequence[str]] = None,
                    encoding: Optional[str] = None) -> CountResponse:
        return cast(CountResponse, await self._do(_core.count(text, texts, encoding)))

    async def assembly(self, assembly_id: str) -> AssemblyResponse:
        return cast(AssemblyResponse, await self._do(_core.assembly(assembly_id)))

    async def healthz(self) -> Status:
        return cast(Status, await self._do(Call("GET", "/healthz")))

    async def readyz(self) -> Status:
        return cast(Status, await self._do(Call("GET", "/readyz")))


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readline()
            return bytes(out)
        out += await reader.readexactly(size)
        await reader.readline()
