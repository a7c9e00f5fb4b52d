"""Contract tests: the real model clients (boto3 under langchain-aws `ChatBedrockConverse`, the
`openai` SDK under langchain-openai `ChatOpenAI`) against local peers that speak the Bedrock
Converse and OpenAI chat-completions wire protocols (`devstack.model_stubs`).

The peers start once per module on free ports of 127.0.0.1; each test starts with an empty
script and no recorded requests. Connections leave loopback never: a misconfigured endpoint
fails the test instead of reaching a real model service.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from devstack.model_stubs import BedrockPeer, OpenAIPeer

BEDROCK_MODEL_ID = "anthropic.claude-3-5-haiku-20241022-v1:0"
BEDROCK_SPEC = f"bedrock/{BEDROCK_MODEL_ID}"
#: Short enough to keep the timeout tests quick; botocore rounds up to whole seconds.
CLIENT_TIMEOUT_S = 1.0

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in _LOOPBACK and not host.startswith("/"):
        raise OSError(f"contract tests talk to local peers only (tried {address!r})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network_beyond_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture(scope="module")
def bedrock_server() -> Iterator[BedrockPeer]:
    with BedrockPeer() as peer:
        yield peer


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIPeer]:
    with OpenAIPeer() as peer:
        yield peer


@pytest.fixture
def bedrock_peer(bedrock_server: BedrockPeer) -> Iterator[BedrockPeer]:
    """The module's Bedrock peer, fresh for this test."""
    bedrock_server.reset()
    yield bedrock_server
    bedrock_server.reset()


@pytest.fixture
def openai_peer(openai_server: OpenAIPeer) -> Iterator[OpenAIPeer]:
    """The module's OpenAI-compatible peer, fresh for this test."""
    openai_server.reset()
    yield openai_server
    openai_server.reset()


@pytest.fixture
def bedrock_spec() -> str:
    """The Bedrock model the tests configure (a real model id: langchain-aws picks the
    structured-output style, a forced tool, from it)."""
    return BEDROCK_SPEC


@pytest.fixture
def bedrock_model(bedrock_peer: BedrockPeer) -> Callable[..., Any]:
    """`build_chat_model` for Bedrock with BEDROCK_ENDPOINT_URL's value pointing at the peer (the
    product's factory, not a test one; the endpoint wins over the suite's moto AWS_ENDPOINT_URL)."""
    from csagent.models.providers import build_chat_model

    def build(timeout_s: float = CLIENT_TIMEOUT_S) -> Any:
        return build_chat_model(BEDROCK_SPEC, timeout_s=timeout_s, region="us-east-1",
                                bedrock_endpoint_url=bedrock_peer.url)

    return build


@pytest.fixture
def openai_model(openai_peer: OpenAIPeer) -> Callable[..., Any]:
    """`build_chat_model` for the self-hosted OpenAI-compatible path, pointed at the peer."""
    from csagent.models.providers import build_chat_model

    def build(timeout_s: float = CLIENT_TIMEOUT_S) -> Any:
        return build_chat_model(openai_peer.model_spec(), timeout_s=timeout_s)

    return build
