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

At lifespan startup (or on the first request of a loop whose server ran
no lifespan) the wrapper also sets TCP_NODELAY on every bound, unconnected
TCP socket the worker holds: the one it listens on, or will once its
lifespan has started. Linux copies the option to each connection accepted
from it.
asyncio sets it itself only on sockets whose ``proto`` reads IPPROTO_TCP: a
socket made with ``socket.socket(family)`` reads 0, which is what uvicorn
binds in its parent with ``--workers`` and hands to each worker. Without
it, a reply written in two sends (headers, then body) waits for the
client's delayed ACK, about 40 ms, and a pair of requests across two
workers reads as if they took turns.

The limiter is set at lifespan startup, before the app's own startup runs,
and again on the first request of a loop whose server ran no lifespan (the
limiter is per event loop, so per worker). An app with its own lifespan gets
every lifespan message as sent; an app that does not speak lifespan (raises
before it receives anything) gets it answered here, so the server still
sees a lifespan it can run.

Every HTTP reply gets headers the runner reads (never the app's body):

  X-Gates-Loop-Thread   the OS thread id of the event loop that served it
  X-Gates-Threadpool    the limiter's total_tokens in that loop

and the wrapper answers one route itself, on the loop, without the app:

  GET /.gates/loop      200 "loop free", at once if the loop is free; a
                        view that blocks the loop delays it until it ends.
                        X-Gates-Pool-Busy: the threadpool's tokens borrowed
                        at that moment (a def view running in the pool);
                        X-Gates-Pool-Threads: the OS thread ids of anyio's
                        worker threads alive then.
"""

import asyncio
import importlib
import os
import socket
import stat
import sys
import threading

LOOP_PROBE = "/.gates/loop"

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
    """Per event loop: the limiter, set once."""

    def __init__(self):
        self.limiter = None
        self.tokens = None
        self.thread = threading.get_native_id()


_states = {}
_states_lock = threading.Lock()


def _open_fds():
    """This process's open file descriptors (Linux: /proc; else the low ones)."""
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return range(3, 256)


def _is_unconnected_tcp(sock):
    """A TCP socket bound to a port, with no peer: one a server listens on
    or is about to (uvicorn's parent binds, each worker calls listen() only
    after its lifespan startup)."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return False
    if sock.getsockname()[1] == 0:
        return False
    try:
        sock.getpeername()
    except OSError:
        return True
    return False


def _nodelay_listeners():
    """TCP_NODELAY on every bound, unconnected TCP socket this process holds.

    Returns how many it set. Each is reached through a duplicate of its
    descriptor, so closing that leaves the server's socket open.
    """
    count = 0
    for fd in _open_fds():
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if _is_unconnected_tcp(sock):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                count += 1
        except OSError:
            pass
        finally:
            sock.close()
    return count


def _configure():
    """Sets the limiter and the listeners' TCP_NODELAY, once per running loop."""
    loop = asyncio.get_running_loop()
    with _states_lock:
        state = _states.get(id(loop))
        if state is not None:
            return state
        state = _LoopState()
        _states[id(loop)] = state
    _nodelay_listeners()
    try:
        import anyio.to_thread

        limiter = anyio.to_thread.current_default_thread_limiter()
        if _threads:
            limiter.total_tokens = int(_threads)
        state.limiter = limiter
        state.tokens = limiter.total_tokens
    except ImportError:
        state.tokens = None
    return state


def _pool_threads():
    """OS thread ids of anyio's worker threads alive now."""
    return [
        t.native_id
        for t in threading.enumerate()
        if type(t).__name__ == "WorkerThread" and type(t).__module__.startswith("anyio")
    ]


async def _loop_probe(state, send):
    busy = state.limiter.borrowed_tokens if state.limiter is not None else "-"
    body = b"loop free"
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/plain"),
                (b"content-length", str(len(body)).encode()),
                (b"x-gates-loop-thread", str(state.thread).encode()),
                (b"x-gates-pool-busy", str(busy).encode()),
                (b"x-gates-pool-threads", ",".join(str(t) for t in _pool_threads()).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


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
    if scope.get("path") == LOOP_PROBE:
        return await _loop_probe(state, send)

    async def wrapped_send(message):
        if message.get("type") == "http.response.start":
            headers = list(message.get("headers") or [])
            headers += [
                (b"x-gates-loop-thread", str(state.thread).encode()),
                (b"x-gates-threadpool", str(state.tokens if state.tokens is not None else "-").encode()),
            ]
            message = dict(message, headers=headers)
        await send(message)

    if _offload:
        return await _offloaded(scope, receive, wrapped_send)
    return await inner(scope, receive, wrapped_send)
