"""A streamed turn on the wire: server-sent events (text/event-stream).

    event: progress   data: {"node": "route", "label": "Understanding your message", "step": 3}
    ...               (one per graph node that finished; step 0 "received" first)
    event: answer     data: {"text": "Your order #W2611340 "}     (the reply, in chunks)
    event: done       data: {the TurnOut, exactly as POST .../messages returns it}
    event: error      data: {"error": {"code", "message"}}        (instead of answer/done)
    : keep-alive                                                   (a comment while the graph is slow)

The answer is sent only after the graph has finished, so nothing said is ever taken back.

The turn (`ConversationService.stream_message`) is synchronous code that does I/O; `EventPump`
runs it on its own thread, so the event loop stays free to send progress and heartbeats while a
node works. The thread runs the turn to its end even if the client goes away: the checkpoint is
written and the lease freed exactly as for a turn nobody streamed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from csagent.domain.errors import DomainError
from csagent.streaming.progress import Progress

logger = logging.getLogger("csagent.http")

HEARTBEAT = ": keep-alive\n\n"
STREAM_HEADERS = {
    "Cache-Control": "no-cache",   # never a stored copy of a conversation
    "X-Accel-Buffering": "no",     # proxies (nginx and alike) pass each event on at once
}
INTERRUPTED = ("something went wrong on our side before your answer was ready. Please send the same "
               "message again: we pick up where we stopped, and nothing already done is done twice")
_WORDS = re.compile(r"\S+\s*|\s+")


def sse(event: str, data: Any) -> str:
    """One event; `data` as compact JSON on one line (JSON escapes newlines)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


def answer_chunks(text: str, size: int = 48) -> list[str]:
    """The reply in pieces of about `size` characters, cut after whole words; joined, they are
    exactly `text` (the client appends them)."""
    chunks: list[str] = []
    current = ""
    for word in _WORDS.findall(text):
        if current and len(current) + len(word) > size:
            chunks.append(current)
            current = ""
        current += word
    if current:
        chunks.append(current)
    return chunks


def error_event(exc: BaseException) -> str:
    """The public form of an error after the stream started: a domain error says what it is;
    anything else says only that the turn stopped and how to finish it (the turn released its
    lease, and the same message resumes it from its checkpoint)."""
    if isinstance(exc, DomainError):
        return sse("error", {"error": {"code": exc.code, "message": exc.message}})
    logger.error("streamed turn failed: %s", type(exc).__name__, exc_info=exc)
    return sse("error", {"error": {"code": "internal_error", "message": INTERRUPTED}})


class EventPump:
    """Pulls a synchronous iterator to its end on a thread of its own and hands each item to the
    event loop. Every item is pulled on that one thread (context variables a turn sets in one
    step are still there in the next)."""

    def __init__(self, produce: Callable[[], Iterable[Any]]) -> None:
        self._produce = produce
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._pending: asyncio.Future[tuple[str, Any]] | None = None

    def start(self) -> EventPump:
        self._loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(self._pump,), name="turn-events", daemon=True).start()
        return self

    def _pump(self) -> None:
        outcome: tuple[str, Any] = ("end", None)
        try:
            for item in self._produce():
                self._put(("item", item))
        except Exception as exc:  # noqa: BLE001 - handed to the event loop, which reports it
            outcome = ("error", exc)
        finally:
            self._put(outcome)

    def _put(self, entry: tuple[str, Any]) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop is closed (server stopping): nobody listens
            self._loop.call_soon_threadsafe(self._queue.put_nowait, entry)

    async def get(self, timeout: float | None = None) -> tuple[str, Any] | None:
        """("item", x), ("error", exc) or ("end", None); None if nothing came within `timeout`.
        A timeout loses nothing: the same wait goes on at the next call."""
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._queue.get())
        done, _ = await asyncio.wait({self._pending}, timeout=timeout)
        if not done:
            return None
        entry = self._pending.result()
        self._pending = None
        return entry

    async def first(self) -> Any:
        """The first item; raises what the iterator raised before it (a refused turn)."""
        entry = await self.get()
        assert entry is not None
        kind, value = entry
        if kind == "error":
            raise value
        if kind == "end":
            raise RuntimeError("the turn produced no events")
        return value

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()


async def turn_stream(pump: EventPump, first: Progress, *, heartbeat_s: float,
                      chunk_chars: int = 48) -> AsyncIterator[str]:
    """The body of a streamed turn, from its first event (already pulled) to `done` or `error`."""
    try:
        yield sse("progress", first.as_dict())
        while True:
            entry = await pump.get(heartbeat_s)
            if entry is None:
                yield HEARTBEAT
                continue
            kind, value = entry
            if kind == "end":
                return
            if kind == "error":
                yield error_event(value)
                return
            if isinstance(value, Progress):
                yield sse("progress", value.as_dict())
                continue
            for chunk in answer_chunks(str((value.reply or {}).get("text") or ""), chunk_chars):
                yield sse("answer", {"text": chunk})
            yield sse("done", value.model_dump(mode="json"))
    finally:
        pump.close()
