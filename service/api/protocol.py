"""uvicorn's HTTP protocol with a request-header deadline (a slowloris defence).

uvicorn times out idle keep-alive connections but not a request whose headers trickle in: any
byte re-arms nothing, so a client sending one header byte every few seconds holds a connection
(and a file descriptor) for as long as it likes. This subclass closes a connection whose request
headers are not complete ``TAILOR_HEADER_TIMEOUT_S`` after it opened or after the previous
response; the body has its own deadline (``BodyLimitMiddleware``). uvicorn has no such option, so
this is the smallest addition: the parser is uvicorn's own (httptools), only the timer is ours.
``tailor serve`` passes it as ``http=``; a reverse proxy in front should still buffer requests
(docs/operations.md).
"""

from __future__ import annotations

import asyncio
import functools

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


@functools.cache
def header_timeout_s() -> float:
    """The deadline from settings, read once per worker process (workers are spawned)."""
    from service.core.settings import Settings

    return Settings().header_timeout_s


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """Close the connection when a request's headers are not complete in time.

    A request's headers are complete when uvicorn starts its request/response ``cycle``; the
    timer runs only while no cycle is in progress (none yet, or the last one answered), so a
    pipelined request that started before the previous response finished is never cut off.
    """

    _timer: asyncio.TimerHandle | None = None

    def __init__(self, config, *args, **kwargs) -> None:
        super().__init__(config, *args, **kwargs)
        # an embedding server (tests) may set it on its Config; ``tailor serve`` uses settings
        self.header_timeout_s = getattr(config, "header_timeout_s", None) or header_timeout_s()

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._check_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request's cycle
        self._expect_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _in_progress(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _expect_headers(self) -> None:
        self._cancel()
        if not self._in_progress():
            self._timer = self.loop.call_later(self.header_timeout_s, self._expired)

    def _check_headers(self) -> None:
        if self._timer is not None and self._in_progress():
            self._cancel()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if not self.transport.is_closing():
            self.transport.close()
