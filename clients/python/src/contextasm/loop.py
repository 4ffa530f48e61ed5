"""A conversation through the server: each model call assembled, each
answer fed back, tool calls run in between."""

from __future__ import annotations

import inspect
import json
from datetime import datetime, timedelta
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Union, cast

from . import messages as m
from ._types import AssembleResponse, Declaration, FeedbackResponse, Format
from .aio import AsyncClient
from .client import Client

Tools = Mapping[str, Callable[..., Any]]
# A retriever's relevance for a call: given the conversation's messages, the
# scores of blocks by request_id from 0 to 1, or None for the server's own
# (the newest user message).
Relevance = Callable[[Sequence[Mapping[str, Any]]], Any]


class _State:
    """What both conversations keep: the messages in the SDK's shape, when
    each was added, and the last assembly."""

    def __init__(self, *, template: Union[str, Mapping[str, Any]], session: str, format: Format,
                 user: Optional[str], roles: Optional[Sequence[str]], system: Sequence[str],
                 prefix: Optional[str], budget: Optional[int], relevance: Optional[Relevance] = None) -> None:
        if format not in ("openai", "anthropic"):
            raise ValueError("a Conversation speaks openai or anthropic")
        self.template = template
        self.session = session
        self.format: Format = format
        self.user = user
        self.roles = roles
        self.system = list(system)
        self.prefix = prefix if prefix is not None else f"conversation/{session}/"
        self.budget = budget
        self.relevance = relevance
        self.messages: List[m.Message] = []
        self._times: List[datetime] = []
        self.last: Optional[AssembleResponse] = None
        self.feedback: Optional[FeedbackResponse] = None

    def add(self, message: Mapping[str, Any]) -> None:
        """Appends a message in the SDK's shape (dated now, after the last)."""
        t = m.now()
        if self._times and t <= self._times[-1]:
            t = self._times[-1] + timedelta(milliseconds=1)
        self.messages.append(dict(message))
        self._times.append(t)

    def add_user(self, text: str) -> None:
        self.add(m.user(self.format, text))

    def add_tool_result(self, call_id: str, content: str) -> None:
        self.add(m.tool_result(self.format, call_id, content))

    def _declarations(self) -> List[Declaration]:
        return m.declarations(self.messages, self.format, session=self.session, prefix=self.prefix,
                              times=self._times, system=self.system)

    def _now(self) -> Optional[str]:
        # The instant the newest message was added, or later: the server
        # then judges expiry on the host's clock, the one that dated them.
        return m.stamp(max(m.now(), self._times[-1]) if self._times else None)

    def _result(self, out: AssembleResponse) -> Dict[str, Any]:
        self.last = out
        return dict(out.get("body") or {})


def _tool_output(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


class Conversation(_State):
    """One session's conversation, for a synchronous host:

        conv = Conversation(client, template="support", session="s1", format="openai")
        conv.add_user("Where is my order?")
        final = conv.run(lambda body: openai.chat.completions.create(model=M, tools=T, **body).model_dump(),
                         tools={"get_order": get_order})

    request() declares the conversation (replacing what it declared
    before, under its prefix) and returns the body to send: {"messages"}
    for OpenAI, {"system", "messages"} for Anthropic. record(reply) feeds
    the reply back and appends it; run() loops over both, running the
    tools the model calls.
    """

    def __init__(self, client: Client, *, template: Union[str, Mapping[str, Any]], session: str,
                 format: Format = "openai", user: Optional[str] = None, roles: Optional[Sequence[str]] = None,
                 system: Sequence[str] = (), prefix: Optional[str] = None, budget: Optional[int] = None,
                 relevance: Optional[Relevance] = None) -> None:
        super().__init__(template=template, session=session, format=format, user=user, roles=roles, system=system,
                         prefix=prefix, budget=budget, relevance=relevance)
        self.client = client

    def request(self) -> Dict[str, Any]:
        self.client.declare(self._declarations(), replace_prefix=self.prefix)
        scores = self.relevance(self.messages) if self.relevance else None
        return self._result(self.client.assemble(self.template, session=self.session, user=self.user,
                                                 roles=self.roles, now=self._now(), format=self.format,
                                                 budget=self.budget, relevance=scores))

    def record(self, response: Mapping[str, Any]) -> m.Reply:
        """Feeds the model's reply (the SDK's response as a dict) back for
        the last assembly and appends its message."""
        if self.last is None:
            raise RuntimeError("record() before request(): there is no assembly to feed back")
        r = m.reply(self.format, response)
        self.feedback = self.client.feedback(self.last["assembly_id"], r.text, cited=r.cited, usage=r.usage)
        self.add(r.message)
        return r

    def run(self, call_model: Callable[[Dict[str, Any]], Mapping[str, Any]], tools: Tools = {},
            max_steps: int = 8) -> Mapping[str, Any]:
        """Assembles, calls the model with the body, feeds the reply back,
        runs the tools it calls (tools[name](**arguments), the result a
        string or JSON) and goes on until a reply calls none; returns it."""
        for _ in range(max_steps):
            response = call_model(self.request())
            r = self.record(response)
            if not r.tool_calls:
                return response
            for call_id, name, args in r.tool_calls:
                self.add_tool_result(call_id, _tool_output(tools[name](**args)))
        raise RuntimeError(f"the model still calls tools after {max_steps} steps")


class AsyncConversation(_State):
    """Conversation for an asyncio host: request, record and run are
    coroutines; call_model and the tools may be coroutine functions."""

    def __init__(self, client: AsyncClient, *, template: Union[str, Mapping[str, Any]], session: str,
                 format: Format = "openai", user: Optional[str] = None, roles: Optional[Sequence[str]] = None,
                 system: Sequence[str] = (), prefix: Optional[str] = None, budget: Optional[int] = None,
                 relevance: Optional[Relevance] = None) -> None:
        super().__init__(template=template, session=session, format=format, user=user, roles=roles, system=system,
                         prefix=prefix, budget=budget, relevance=relevance)
        self.client = client

    async def request(self) -> Dict[str, Any]:
        await self.client.declare(self._declarations(), replace_prefix=self.prefix)
        scores = self.relevance(self.messages) if self.relevance else None
        if inspect.isawaitable(scores):
            scores = await scores
        return self._result(await self.client.assemble(self.template, session=self.session, user=self.user,
                                                       roles=self.roles, now=self._now(), format=self.format,
                                                       budget=self.budget, relevance=scores))

    async def record(self, response: Mapping[str, Any]) -> m.Reply:
        if self.last is None:
            raise RuntimeError("record() before request(): there is no assembly to feed back")
        r = m.reply(self.format, response)
        self.feedback = await self.client.feedback(self.last["assembly_id"], r.text, cited=r.cited, usage=r.usage)
        self.add(r.message)
        return r

    async def run(self, call_model: Callable[[Dict[str, Any]], Union[Mapping[str, Any], Awaitable[Mapping[str, Any]]]],
                  tools: Tools = {}, max_steps: int = 8) -> Mapping[str, Any]:
        for _ in range(max_steps):
            got = call_model(await self.request())
            response = cast(Mapping[str, Any], await got if inspect.isawaitable(got) else got)
            r = await self.record(response)
            if not r.tool_calls:
                return response
            for call_id, name, args in r.tool_calls:
                out = tools[name](**args)
                if inspect.isawaitable(out):
                    out = await out
                self.add_tool_result(call_id, _tool_output(out))
        raise RuntimeError(f"the model still calls tools after {max_steps} steps")
