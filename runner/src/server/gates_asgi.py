"""gates_asgi: the runner's wrapper around a user's ASGI app.

Every ASGI profile serves ``gates_asgi:app``; the runner writes this file
into a folder of its own, puts that folder on PYTHONPATH and names the real
app in the environment:

  GATES_ASGI_APP       MODULE:ATTR of the app (imported from GATES_ASGI_APP_DIR)
  GATES_ASGI_APP_DIR   the folder it is imported from (put first on sys.path)
  GATES_ASGI_THREADS   optional: anyio's default thread limiter's
                       ``total_tokens`` (the threadpool Starlette and FastAPI
                       run ``def`` endpoints in; 40 by default)
  GATES_ASGI_OFFLOAD   optional, "1": each HTTP request runs the app on a
                       pool thread with an event loop of its own, as if the
                       view's blocking call were moved to ``asyncio.to_thread``
                       (advise measures whether that would scale)

The limiter is set at lifespan startup, before the app's own startup runs,
and again on the first request of a loop whose server ran no lifespan (the
limiter is per event loop, so per worker). An app with its own lifespan gets
every lifespan message as sent; an app that does not speak lifespan (raises
before it receives anything) gets it answered here, so the server still
sees a lifespan it can run.

Every HTTP reply gets four headers the runner reads (never the app's body):

  X-Gates-Loop-Thread  the OS thread id of the event loop that served it
  X-Gates-Threadpool   the limiter's total_tokens in that loop
  X-Gates-View-Ms      from the request's start to its reply's start
  X-Gates-Loop-Held-Ms the longest the loop went without running its other
                       tasks during that time: a ticker task on the loop
                       wakes every TICK_S, and a wake-up late by more than
                       STALL_S is a stall. A view that blocks the loop holds
                       it for about its whole View-Ms; one that awaits, or
                       runs in the threadpool, holds it for a few ms at most.
"""

import asyncio
import importlib
import os
import sys
import threading
import time

TICK_S = 0.002
STALL_S = 0.004

_target = os.environ.get("GATES_ASGI_APP", "")
_app_dir = os.environ.get("GATES_ASGI_APP_DIR")
_threads = os.environ.get("GATES_ASGI_THREADS")
_offload = os.environ.get("GATES_ASGI_OFFLOAD") == "1"


def _load():
    if _app_dir and _app_dir not in sys.path:
        sys.path.insert(0, _app_dir)
    module, sep, attr = _target.partition(":")
    if not sep or not module or not attr:
        raise RuntimeError("GATES_ASGI_APP=%r is not MODULE:ATTR" % _target)
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


inner = _load()


class _LoopState:
    """Per event loop: the limiter set once, and the stall ticker."""

    def __init__(self):
        self.last = time.perf_counter()
        self.stalls = []  # (start, end) of recent stalls
        self.tokens = None
        self.thread = threading.get_native_id()

    async def tick(self):
        while True:
            before = time.perf_counter()
            await asyncio.sleep(TICK_S)
            now = time.perf_counter()
            if now - before - TICK_S > STALL_S:
                self.stalls.append((before + TICK_S, now))
                if len(self.stalls) > 512:
                    del self.stalls[:256]
            self.last = now

    def held_since(self, start):
        """The longest stall overlapping [start, now], the current one included."""
        now = time.perf_counter()
        longest = 0.0
        for s, e in self.stalls:
            if e > start:
                longest = max(longest, min(e, now) - max(s, start))
        ongoing = now - max(self.last + TICK_S, start)
        if ongoing > STALL_S:
            longest = max(longest, ongoing)
        return longest


_states = {}
_states_lock = threading.Lock()


def _configure():
    """Sets the limiter and starts the ticker, once per running loop."""
    loop = asyncio.get_running_loop()
    with _states_lock:
        state = _states.get(id(loop))
        if state is not None:
            return state
        state = _LoopState()
        _states[id(loop)] = state
    try:
        import anyio.to_thread

        limiter = anyio.to_thread.current_default_thread_limiter()
        if _threads:
            limiter.total_tokens = int(_threads)
        state.tokens = limiter.total_tokens
    except ImportError:
        state.tokens = None
    state.task = loop.create_task(state.tick())
    return state


async def _lifespan(scope, receive, send):
    consumed = []

    async def recv():
        message = await receive()
        if message.get("type") == "lifespan.startup":
            _configure()
        consumed.append(message.get("type"))
        return message

    try:
        await inner(scope, recv, send)
        return
    except BaseException:
        if consumed:
            raise
    # The app does not speak lifespan: answer it here.
    while True:
        message = await recv()
        kind = message.get("type")
        if kind == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif kind == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


_offload_local = threading.local()


async def _offloaded(scope, receive, send):
    """Runs the app for one request on a pool thread with its own loop."""
    import anyio.from_thread
    import anyio.to_thread

    def run():
        loop = getattr(_offload_local, "loop", None)
        if loop is None:
            loop = _offload_local.loop = asyncio.new_event_loop()

        async def recv():
            return anyio.from_thread.run(receive)

        async def snd(message):
            anyio.from_thread.run(send, message)

        loop.run_until_complete(inner(scope, recv, snd))

    await anyio.to_thread.run_sync(run)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        return await _lifespan(scope, receive, send)
    state = _configure()
    if scope["type"] != "http":
        return await inner(scope, receive, send)
    start = time.perf_counter()

    async def wrapped_send(message):
        if message.get("type") == "http.response.start":
            held = state.held_since(start)
            headers = list(message.get("headers") or [])
            headers += [
                (b"x-gates-loop-thread", str(state.thread).encode()),
                (b"x-gates-threadpool", str(state.tokens if state.tokens is not None else "-").encode()),
                (b"x-gates-view-ms", ("%.3f" % ((time.perf_counter() - start) * 1000.0)).encode()),
                (b"x-gates-loop-held-ms", ("%.3f" % (held * 1000.0)).encode()),
            ]
            message = dict(message, headers=headers)
        await send(message)

    if _offload:
        return await _offloaded(scope, receive, wrapped_send)
    return await inner(scope, receive, wrapped_send)
