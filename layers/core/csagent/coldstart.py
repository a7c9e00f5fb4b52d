"""A function's cold start without the cyclic garbage collector: paused from the handler module's
import until its first invocation has returned.

A fresh router process builds some 200,000 long-lived objects (modules, classes, pydantic schemas,
the compiled graph, the fixed texts' arrays) on its way to the first reply, and CPython's cyclic
collector walks them again and again meanwhile: five full collections, about 0.35 s of CPU of a
first reply of about 2.3 s on these machines, which then find some 2,700 objects to free.
Reference counting frees everything else as it goes, collector or not.

`pause_gc()`, the handler module's first statement, turns the collector off (once per process:
a module imported again, as tests do, changes nothing). `resume_gc_after_first_call(handler)`
turns it back on when the first invocation returns (or raises), after `gc.freeze()`: what exists
then moves to a generation the collector never walks, so the warm turns' collections do not
walk the start-up heap either. The few cycles the start left (those 2,700 objects) stay, frozen,
for the life of the process. Nothing here runs a collection: a full one now would cost the first
reply what the pause saved.

Where the first result is not the end of the first invocation, a function resumes earlier with
`resume_gc()`: the worker after its batch's first record (not ten turns' cycles frozen), the
knowledge ingest once its clients are built (before a document's parse, whose cycles, a PDF
reader's, must stay collectable). The stream function is a server, not a handler:
`resume_gc_after_first_request(app, unless=...)` resumes when its first HTTP request other than
the Lambda Web Adapter's readiness probe has ended.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
#: An ASGI application: `await app(scope, receive, send)`.
ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


class _ColdStart:
    """Whether this process has paused its collector, and whether it is still paused."""

    started = False
    paused = False


def pause_gc() -> None:
    """Turn the cyclic collector off until `resume_gc()`, the first time a process asks; a
    collector someone else turned off is left to them."""
    if _ColdStart.started:
        return
    _ColdStart.started = True
    if gc.isenabled():
        gc.disable()
        _ColdStart.paused = True


def resume_gc() -> None:
    """Freeze what exists and turn the collector back on, when `pause_gc()` turned it off."""
    if _ColdStart.paused:
        _ColdStart.paused = False
        gc.freeze()
        gc.enable()


def resume_gc_after_first_call(handler: F) -> F:
    """`handler`, resuming the collector (`resume_gc`) once its first call has returned or raised."""

    @functools.wraps(handler)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        finally:
            resume_gc()

    return wrapper  # type: ignore[return-value]


def resume_gc_after_first_request(app: ASGIApp, *,
                                  unless: Callable[[dict[str, Any]], bool] = lambda scope: False) -> ASGIApp:
    """`app` (ASGI), resuming the collector (`resume_gc`) once an HTTP request has ended (its
    response sent, or the app raised) for which `unless(scope)` is false: a request that is not
    the first result (a readiness probe) leaves the collector paused. Other scopes (lifespan)
    never resume it."""

    async def wrapper(scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await app(scope, receive, send)
        finally:
            if scope.get("type") == "http" and not unless(scope):
                resume_gc()

    return wrapper
