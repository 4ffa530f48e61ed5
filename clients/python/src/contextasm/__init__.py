"""contextasm: a client of contextasm serve, the engine that decides what
an agent's model sees. Standard library only.

    from contextasm import Client
    client = Client("http://127.0.0.1:7411", api_key=KEY)
    client.declare([{"request_id": "rule-1", "memory_type": "constraint", "scope": "global", "content": "..."}])
    out = client.assemble("support", session="s1", format="openai")
    # send out["body"]["messages"] to the model, then:
    client.feedback(out["assembly_id"], answer_text)

AsyncClient is the same for asyncio; Conversation and AsyncConversation
run a tool-using conversation in the OpenAI or Anthropic SDK's message
shapes; contextasm.messages converts those shapes.
"""

from ._core import ContextasmError
from ._types import (AssembleResponse, AssemblyResponse, Citation, CountResponse, Declaration, DeclareResponse,
                     EndResponse, FeedbackResponse, ForgetResponse, Format, Usage)
from .aio import AsyncClient
from .client import Client
from .loop import AsyncConversation, Conversation

__all__ = ["Client", "AsyncClient", "Conversation", "AsyncConversation", "ContextasmError", "Declaration",
           "AssembleResponse", "AssemblyResponse", "Citation", "CountResponse", "DeclareResponse", "EndResponse",
           "FeedbackResponse", "ForgetResponse", "Format", "Usage"]
