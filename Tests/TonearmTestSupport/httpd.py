#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A test HTTP/1.1 server for Tonearm's network tests (Python 3 standard library only).

Usage: httpd.py ROOT [--tls CERT KEY]

Binds 127.0.0.1 on an ephemeral port, serves the files under ROOT, and injects faults chosen per
request by query parameters, so one instance serves every case of a test. It exits when its
standard input (a pipe the test process holds) ends, so a crashed test run leaves nothing behind.

Standard output
---------------
The first line is `PORT <port>` (with `--tls`: `PORT <tls-port> PLAIN <plain-port>`: the same
server is then also reachable without TLS on the plain port, which the Swift wrapper uses for
the control endpoints). It is written once the sockets listen, so reading it is the readiness
signal. Every later line is one JSON object about one request, written when the request is
received, when its status line and headers have been sent, when a stall begins, and when it ends;
the lines of one request share its `id`, and the last one wins:

    {"id": 3, "method": "GET", "path": "/a.mp3", "target": "/a.mp3?drop=1000",
     "query": {"drop": "1000"}, "range": "bytes=0-", "icyMetaData": null,
     "headers": {"host": "127.0.0.1:43123", "range": "bytes=0-", ...}, "tls": false,
     "status": 206, "bytes": 1000, "complete": true, "dropped": true, "stalled": false,
     "clientClosed": false, "rate": null, "arrived": 0.031, "t": 0.125}

`path` is percent-decoded and without the query; `query` keeps the last value of each name;
`range` and `icyMetaData` are the raw request headers (null when absent); `status` is null until
the status line is sent (and stays null for /hang); `bytes` counts the body bytes written after
the headers (for ICY streams the metadata blocks included; for chunked bodies the payload
without the chunk framing); `dropped` means the server cut the connection on purpose (`drop=`);
`clientClosed` means the client went away (or the write failed) before the body ended; `rate` is
the throttle in force (bytes/s) when the line was written; `t` is seconds since the server
started (monotonic) when the line was written, `arrived` the same clock when the request had been
read (the same on every line of the request).

Query parameters (any path that serves a body)
----------------------------------------------
- default: GET and HEAD with `Range: bytes=a-b`, `bytes=a-` and `bytes=-n` (206 with
  `Content-Range: bytes a-b/size`; 416 with `Content-Range: bytes */size` when the start is at or
  past the end; a malformed or multi-range header is ignored: 200 with the whole body),
  `Content-Length`, `Accept-Ranges: bytes`, `Content-Type` by extension (see CONTENT_TYPES).
- `norange=1`: Range is ignored: always 200 with the whole body, no `Accept-Ranges`.
  `norange=lie`: the same, but `Accept-Ranges: bytes` is sent (a ranged request still gets 200
  and the whole body).
- `failafter=K`: the first K requests for this path (the path without the query) are served,
  every later one is answered 503 (counted until /_control/reset).
- `type=MIME`: this Content-Type instead of the one by extension.
- `chunked=1`: `Transfer-Encoding: chunked`, no `Content-Length` (Range still applies).
- `rate=N`: the body is throttled to N bytes/s (written in pieces of N/20 bytes, paced against a
  clock). Without it, the server-wide rate set by /_control/rate applies, re-read before every
  piece, so changing it slows down or speeds up responses already under way.
- `drop=N`: after N body bytes the connection is closed abruptly (FIN, no more data: the client
  sees a body shorter than announced). Only once per path (the path without the query): the
  first response for that path whose body goes past N bytes drops, later ones (a Range resume,
  a re-join) run to the end. A body of N bytes or fewer never drops. /_control/reset-drops
  forgets which paths dropped. `reset=1` with it: the connection is reset (RST) instead, and
  data still in flight may be lost (the client then sees at most N bytes).
- `stall=S&at=N`: after N body bytes (default 0: right after the headers) nothing is sent for S
  seconds, the connection kept open, then the body continues. Once per path, like `drop`.

Endpoints
---------
- `/PATH`: the file ROOT/PATH (404 when missing or a directory; `..` never leaves ROOT).
- `/status/NNN`: status NNN (200..599) with a short text/plain body (none for 204 and 304).
- `/redirect?to=URL[&code=302][&hops=K]`: a redirect (code 301, 302, 303, 307 or 308) to URL
  (absolute, or a path on this server); with `hops=K`, K redirects in a row (each to
  `/redirect?...&hops=K-1`), the last to URL.
- `/redirectloop`: redirects to itself forever; `/redirectloop/a` → `/redirectloop/b` →
  `/redirectloop/a` → … (A→B→A). The query string is kept.
- `/html`: 200, a text/html page (a body that is not media).
- `/hang[?seconds=S]`: reads the request and never answers; the connection closes after S
  seconds (default: when the client goes away or the server stops).
- `/bigheader?bytes=N`: 200 with a header `X-Filler` of N bytes.
- `/radio?file=NAME[&metaint=N][&titles=A|B|C][&every=BYTES][&icy=1][&length=BYTES]
  [&name=S][&br=KBPS]`: an ICY (Shoutcast / Icecast) stream of the file ROOT/NAME looped
  endlessly (or for `length` audio bytes, then the connection closes). The status line is
  `ICY 200 OK` with `icy=1`, else `HTTP/1.0 200 OK`; headers `Content-Type` (by the file's
  extension: audio/mpeg for .mp3), `icy-name` (default "Tonearm Test Radio"), `icy-br`
  (default 128), `icy-pub: 0`; no Content-Length; the connection closes at the end. Only when
  the request has `Icy-MetaData: 1`: the header `icy-metaint: N` (default 16000), and after
  every N audio bytes one metadata block: a length byte L, then L×16 bytes holding
  `StreamTitle='TITLE';` padded with zero bytes — or the single byte 0 (an empty block) when the
  title is the same as in the previous block. The block after P audio bytes (P = N, 2N, …)
  carries `titles[(P // every) % len(titles)]` (titles separated by `|`, default "Tonearm Test
  Radio"; without `every` always the first). Without `Icy-MetaData: 1` the body is the plain
  looped audio.
- `/live/NAME.m3u8[?window=K][&initial=I][&interval=T][&end=1][&duration=D]`: a live HLS media
  playlist generated from the directory ROOT/NAME. Its segments are those of the playlist in that
  directory (`index.m3u8`, else the first `*.m3u8` by name: each `#EXTINF:D,` and URI line; other
  tags are ignored), or, without one, its .ts / .aac / .mp3 / .m4s / .mp4 files in natural name
  order, each of `duration` seconds (default 2). The first request reveals I segments (default
  K); every later GET reveals one more (with `interval=T`: one more every T seconds since the
  first request instead), up to all of them. The playlist lists the last K revealed segments
  (default K = 3), exactly:

      #EXTM3U
      #EXT-X-VERSION:3
      #EXT-X-TARGETDURATION:<ceil of the longest segment duration, over all segments>
      #EXT-X-MEDIA-SEQUENCE:<index of the first listed segment, from 0 = revealed - listed>
      #EXTINF:<duration with 3 decimals>,
      NAME/<segment URI>
      ... (one #EXTINF / URI pair per listed segment)
      #EXT-X-ENDLIST            (only with end=1, once every segment is revealed)

  Segment URIs are relative to the playlist, so they resolve to /live/NAME/<URI>, which serves
  ROOT/NAME/<URI> (absolute URIs from the source playlist are kept as they are). HEAD does not
  reveal a segment. /_control/reset forgets the playlists' progress.
- `/_control/rate?value=N` (GET or POST): the server-wide throttle for bodies without `rate=`, in
  bytes/s; `value` absent, 0 or `none`: unthrottled.
- `/_control/reset-drops`: forgets which paths have dropped or stalled.
- `/_control/reset`: the rate, the drops and stalls, the `failafter` counts, and the live playlists
  back to the start.
- `/_control/state`: the state only.
  Each control endpoint answers 200 with the state as JSON: {"rate", "dropped", "stalled", "live"}.

With `--tls CERT KEY` (PEM files) the main port speaks TLS (the handshake runs on the request's
thread; a failed handshake, e.g. a client that does not trust the certificate, is reported on
standard error only, as there is no request), and the plain port serves the same without TLS.
"""

import argparse
import json
import math
import os
import re
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONTENT_TYPES = {
    ".mp3": "audio/mpeg",
    ".aac": "audio/aac",
    ".adts": "audio/aac",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".m4a": "audio/mp4",
    ".mp4": "audio/mp4",
    ".m4s": "audio/mp4",
    ".wav": "audio/wav",
    ".m3u8": "application/vnd.apple.mpegurl",
    ".m3u": "audio/x-mpegurl",
    ".pls": "audio/x-scpls",
    ".ts": "video/mp2t",
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".key": "application/octet-stream",
}
SEGMENT_EXTENSIONS = (".ts", ".aac", ".mp3", ".m4s", ".mp4")
REDIRECT_CODES = (301, 302, 303, 307, 308)
HTML_PAGE = (b"<!DOCTYPE html>\n<html><head><title>Not audio</title></head>\n"
             b"<body><h1>Hello</h1><p>This is a web page, not audio.</p></body></html>\n")
START = time.monotonic()


def content_type(name):
    return CONTENT_TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")


def natural_key(name):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


class Abort(Exception):
    """Ends a response early: the connection has been cut on purpose."""


class BadRequest(Exception):
    """A query parameter that cannot be used: answered with 400."""


class State:
    """What the requests share: the server-wide rate, the paths that already dropped or stalled,
    and the progress of the live playlists."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rate = None
        self.dropped = set()
        self.stalled = set()
        self.served = {}
        self.live = {}
        self.next_id = 0

    def new_id(self):
        with self.lock:
            self.next_id += 1
            return self.next_id

    def claim(self, which, key):
        """True for the first caller with `key` (until reset)."""
        with self.lock:
            if key in which:
                return False
            which.add(key)
            return True

    def count(self, key):
        """Counts one more request for `key` and returns how many there were (this one included)."""
        with self.lock:
            self.served[key] = self.served.get(key, 0) + 1
            return self.served[key]

    def snapshot(self):
        with self.lock:
            return {"rate": self.rate, "dropped": sorted(self.dropped), "stalled": sorted(self.stalled),
                    "live": {k: v["count"] for k, v in self.live.items()}}


STATE = State()
OUTPUT_LOCK = threading.Lock()
# Sockets whose close must reset the connection (drop=N&reset=1): no FIN first.
RESET_SOCKETS = set()
RESET_LOCK = threading.Lock()


def emit(line):
    with OUTPUT_LOCK:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            os._exit(0)  # nobody reads the log any more


def int_param(query, name, default=None, minimum=0):
    if name not in query or query[name] == "":
        return default
    try:
        value = int(query[name])
    except ValueError:
        raise BadRequest(f"{name} must be an integer")
    if value < minimum:
        raise BadRequest(f"{name} must be at least {minimum}")
    return value


def float_param(query, name, default=None):
    if name not in query or query[name] == "":
        return default
    try:
        value = float(query[name])
    except ValueError:
        raise BadRequest(f"{name} must be a number")
    if not math.isfinite(value) or value < 0:
        raise BadRequest(f"{name} must be a non-negative number")
    return value


def parse_range(value, size):
    """(start, end) with end exclusive; "unsatisfiable"; or None to ignore the header."""
    m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", value)
    if not m or (m[1] == "" and m[2] == ""):
        return None
    if m[1] == "":
        n = int(m[2])
        if n == 0 or size == 0:
            return "unsatisfiable"
        return (max(0, size - n), size)
    start = int(m[1])
    if start >= size:
        return "unsatisfiable"
    end = int(m[2]) + 1 if m[2] else size
    if end <= start:
        return None
    return (start, min(end, size))


class Body:
    """Writes a response body with the throttle, the drop and the stall of the request."""

    def __init__(self, handler, chunked=False):
        q = handler.query
        self.handler = handler
        self.chunked = chunked
        self.sent = 0
        self.rate_param = int_param(q, "rate", minimum=1)
        self.drop_at = int_param(q, "drop")
        self.reset = q.get("reset") == "1"
        stall = float_param(q, "stall")
        self.stall_at = int_param(q, "at", 0) if stall is not None else None
        self.stall_seconds = stall or 0
        self.key = handler.record["path"]
        self.origin = None  # (time, bytes sent, rate) the pacing counts from
        handler.record["rate"] = self.rate()

    def rate(self):
        return self.rate_param if self.rate_param is not None else STATE.rate

    def write(self, data):
        view = memoryview(data)
        i = 0
        while i < len(view):
            self.checkpoints()
            n = len(view) - i
            for point in (self.drop_at, self.stall_at):
                if point is not None and point > self.sent:
                    n = min(n, point - self.sent)
            rate = self.rate()
            self.handler.record["rate"] = rate
            if rate:
                n = min(n, max(1, rate // 20))
                self.pace(rate)
            else:
                self.origin = None
            self.send(view[i:i + n])
            i += n
            self.sent += n
            self.handler.record["bytes"] = self.sent

    def finish(self):
        if self.chunked:
            self.handler.wfile.write(b"0\r\n\r\n")

    def send(self, piece):
        if self.chunked:
            self.handler.wfile.write(b"%x\r\n" % len(piece) + bytes(piece) + b"\r\n")
        else:
            self.handler.wfile.write(piece)

    def pace(self, rate):
        now = time.monotonic()
        if self.origin is None or self.origin[2] != rate:
            self.origin = (now, self.sent, rate)
            return
        due = self.origin[0] + (self.sent - self.origin[1]) / rate
        if due > now:
            time.sleep(due - now)

    def checkpoints(self):
        if self.drop_at is not None and self.sent == self.drop_at and STATE.claim(STATE.dropped, self.key):
            self.handler.record["dropped"] = True
            self.handler.cut(self.reset)
            raise Abort()
        if self.stall_at is not None and self.sent == self.stall_at and STATE.claim(STATE.stalled, self.key):
            self.handler.record["stalled"] = True
            self.handler.emit()
            time.sleep(self.stall_seconds)
            self.origin = None


def radio_pieces(data, metaint, titles, every, with_metadata, length):
    """The body of an ICY stream: the audio looped, with metadata blocks when asked for."""
    position = 0  # audio bytes so far
    last_title = None
    while length is None or position < length:
        n = 8192
        if with_metadata:
            n = min(n, metaint - position % metaint)
        if length is not None:
            n = min(n, length - position)
        offset = position % len(data)
        piece = data[offset:offset + n]
        while len(piece) < n:
            piece += data[:n - len(piece)]
        yield piece
        position += n
        if with_metadata and position % metaint == 0:
            title = titles[(position // every) % len(titles)] if every else titles[0]
            if title == last_title:
                yield b"\x00"
            else:
                last_title = title
                text = f"StreamTitle='{title}';".encode("utf-8")[:255 * 16]
                blocks = (len(text) + 15) // 16
                yield bytes([blocks]) + text + b"\x00" * (blocks * 16 - len(text))


def live_segments(directory, default_duration):
    """[(uri, duration)] of the segments of a live playlist's directory."""
    names = sorted(os.listdir(directory), key=natural_key)
    playlists = [n for n in names if n.endswith(".m3u8")]
    segments = []
    if playlists:
        source = "index.m3u8" if "index.m3u8" in playlists else playlists[0]
        duration = None
        with open(os.path.join(directory, source), encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line.startswith("#EXTINF:"):
                    duration = float(line[len("#EXTINF:"):].split(",")[0])
                elif line and not line.startswith("#"):
                    segments.append((line, duration if duration is not None else default_duration))
                    duration = None
    else:
        segments = [(n, default_duration) for n in names
                    if n.lower().endswith(SEGMENT_EXTENSIONS) and os.path.isfile(os.path.join(directory, n))]
    return segments


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "TonearmTestHTTP/1.0"

    def log_message(self, format, *args):
        pass  # the JSON lines are the log

    def do_GET(self):
        self.serve(head=False)

    def do_HEAD(self):
        self.serve(head=True)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.serve(head=False)

    # The log.

    def emit(self):
        self.record["t"] = round(time.monotonic() - START, 6)
        emit(json.dumps(self.record))

    # Responses.

    def serve(self, head):
        split = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(split.path)
        self.head = head
        self.query = {k: v[-1] for k, v in urllib.parse.parse_qs(split.query, keep_blank_values=True).items()}
        self.raw_query = split.query
        self.record = {
            "arrived": round(time.monotonic() - START, 6), "id": STATE.new_id(), "method": self.command, "path": path, "target": self.path,
            "query": self.query, "range": self.headers.get("Range"), "icyMetaData": self.headers.get("Icy-MetaData"),
            "headers": {k.lower(): v for k, v in self.headers.items()}, "tls": isinstance(self.connection, ssl.SSLSocket),
            "status": None, "bytes": 0, "complete": False, "dropped": False, "stalled": False,
            "clientClosed": False, "rate": None,
        }
        self.emit()
        try:
            try:
                self.route(path)
            except BadRequest as e:
                if self.record["status"] is not None:
                    raise
                self.simple(400, f"{e}\n")
        except Abort:
            self.close_connection = True
        except OSError:  # the client went away (reset, broken pipe, TLS error, timeout)
            self.record["clientClosed"] = True
            self.close_connection = True
        finally:
            self.record["complete"] = True
            self.emit()

    def start(self, status, headers, status_line=None):
        """Sends the status line and headers (`status_line` for ICY / HTTP/1.0 answers)."""
        if status_line is None:
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
        else:
            text = status_line + "\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers) + "\r\n"
            self.wfile.write(text.encode("latin-1"))
        self.record["status"] = status
        self.emit()

    def simple(self, status, text, content="text/plain; charset=utf-8", headers=()):
        body = text.encode("utf-8") if isinstance(text, str) else text
        if status in (204, 304):
            self.start(status, list(headers))
            return
        self.start(status, [("Content-Type", content), ("Content-Length", str(len(body)))] + list(headers))
        if not self.head:
            self.wfile.write(body)
            self.record["bytes"] = len(body)

    def cut(self, reset):
        """Closes the connection abruptly (drop=N): FIN now, or RST at close with `reset`."""
        self.close_connection = True
        try:
            if reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                with RESET_LOCK:
                    RESET_SOCKETS.add(id(self.connection))
            else:
                self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def resolve(self, path):
        """ROOT/path, or None when it would leave ROOT."""
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts or any("\x00" in p for p in parts):
            return None
        return os.path.join(self.server.root, *parts)

    def route(self, path):
        if path.startswith("/_control/"):
            return self.control(path[len("/_control/"):])
        m = re.fullmatch(r"/status/(\d{3})", path)
        if m:
            code = int(m[1])
            if not 200 <= code <= 599:
                raise BadRequest("status codes from 200 to 599")
            return self.simple(code, f"{code} {self.responses.get(code, ('',))[0]}\n")
        if path == "/redirect":
            return self.redirect()
        if path in ("/redirectloop", "/redirectloop/a", "/redirectloop/b"):
            target = {"/redirectloop": "/redirectloop", "/redirectloop/a": "/redirectloop/b",
                      "/redirectloop/b": "/redirectloop/a"}[path]
            if self.raw_query:
                target += "?" + self.raw_query
            return self.simple(302, f"redirect to {target}\n", headers=[("Location", target)])
        if path == "/html":
            return self.simple(200, HTML_PAGE, "text/html; charset=utf-8")
        if path == "/hang":
            return self.hang()
        if path == "/bigheader":
            n = int_param(self.query, "bytes", 65536)
            return self.simple(200, "ok\n", headers=[("X-Filler", "a" * n)])
        if path == "/radio":
            return self.radio()
        m = re.fullmatch(r"/live/([^/]+)\.m3u8", path)
        if m:
            return self.live(m[1])
        if path.startswith("/live/"):
            return self.static(path[len("/live"):])
        return self.static(path)

    def control(self, what):
        if what == "rate":
            value = self.query.get("value", "")
            if value in ("", "0", "none"):
                STATE.rate = None
            else:
                STATE.rate = int_param(self.query, "value", minimum=1)
        elif what == "reset-drops":
            with STATE.lock:
                STATE.dropped.clear()
                STATE.stalled.clear()
        elif what == "reset":
            with STATE.lock:
                STATE.rate = None
                STATE.dropped.clear()
                STATE.stalled.clear()
                STATE.served.clear()
                STATE.live.clear()
        elif what != "state":
            return self.simple(404, "unknown control endpoint\n")
        self.simple(200, json.dumps(STATE.snapshot()) + "\n", "application/json")

    def redirect(self):
        target = self.query.get("to")
        if not target:
            raise BadRequest("to= is required")
        code = int_param(self.query, "code", 302)
        if code not in REDIRECT_CODES:
            raise BadRequest(f"code must be one of {REDIRECT_CODES}")
        hops = int_param(self.query, "hops", 1, minimum=1)
        if hops > 1:
            target = "/redirect?" + urllib.parse.urlencode({"to": target, "code": code, "hops": hops - 1})
        self.simple(code, f"redirect to {target}\n", headers=[("Location", target)])

    def hang(self):
        seconds = float_param(self.query, "seconds")
        self.close_connection = True
        self.connection.settimeout(seconds)
        try:
            while self.connection.recv(4096):
                pass
        except (socket.timeout, TimeoutError):
            pass

    def static(self, path):
        full = self.resolve(path)
        if full is None or not os.path.isfile(full):
            return self.simple(404, "not found\n")
        fail_after = int_param(self.query, "failafter")
        if fail_after is not None and STATE.count(path) > fail_after:
            return self.simple(503, "failing on purpose\n")
        size = os.path.getsize(full)
        headers = [("Content-Type", self.query.get("type") or content_type(full))]
        chunked = self.query.get("chunked") == "1"
        start, end, status = 0, size, 200
        norange = self.query.get("norange")
        if norange == "lie":
            headers.append(("Accept-Ranges", "bytes"))
        elif norange != "1":
            headers.append(("Accept-Ranges", "bytes"))
            value = self.headers.get("Range")
            if value is not None:
                wanted = parse_range(value, size)
                if wanted == "unsatisfiable":
                    return self.simple(416, "range not satisfiable\n", headers=[("Content-Range", f"bytes */{size}")])
                if wanted is not None:
                    start, end = wanted
                    status = 206
                    headers.append(("Content-Range", f"bytes {start}-{end - 1}/{size}"))
        if chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        else:
            headers.append(("Content-Length", str(end - start)))
        body = Body(self, chunked)  # checks the parameters before anything is sent
        self.start(status, headers)
        if self.head:
            return
        with open(full, "rb") as f:
            f.seek(start)
            remaining = end - start
            while remaining > 0:
                data = f.read(min(65536, remaining))
                if not data:
                    break
                body.write(data)
                remaining -= len(data)
        body.finish()

    def radio(self):
        name = self.query.get("file")
        full = self.resolve(name) if name else None
        if full is None or not os.path.isfile(full) or os.path.getsize(full) == 0:
            return self.simple(404, "file= names no (non-empty) file\n")
        metaint = int_param(self.query, "metaint", 16000, minimum=1)
        every = int_param(self.query, "every", minimum=1)
        length = int_param(self.query, "length")
        titles = self.query.get("titles", "Tonearm Test Radio").split("|")
        with_metadata = (self.headers.get("Icy-MetaData") or "").strip() == "1"
        headers = [("Content-Type", self.query.get("type") or content_type(full)),
                   ("icy-name", self.query.get("name", "Tonearm Test Radio")),
                   ("icy-br", self.query.get("br", "128")), ("icy-pub", "0")]
        if with_metadata:
            headers.append(("icy-metaint", str(metaint)))
        icy = self.query.get("icy") == "1"
        if not icy:
            headers.append(("Connection", "close"))
        with open(full, "rb") as f:
            data = f.read()
        body = Body(self)
        self.close_connection = True
        self.start(200, headers, "ICY 200 OK" if icy else "HTTP/1.0 200 OK")
        if self.head:
            return
        for piece in radio_pieces(data, metaint, titles, every, with_metadata, length):
            body.write(piece)

    def live(self, name):
        directory = self.resolve(name)
        if directory is None or not os.path.isdir(directory):
            return self.simple(404, "no such live directory\n")
        segments = live_segments(directory, float_param(self.query, "duration", 2.0))
        if not segments:
            return self.simple(404, "no segments\n")
        window = int_param(self.query, "window", 3, minimum=1)
        initial = int_param(self.query, "initial", window, minimum=1)
        interval = float_param(self.query, "interval")
        if interval == 0:
            raise BadRequest("interval must be positive")
        now = time.monotonic()
        with STATE.lock:
            progress = STATE.live.get(name)
            if progress is None:
                progress = {"count": initial, "t0": now}
            elif interval is None and not self.head:
                progress = {"count": progress["count"] + 1, "t0": progress["t0"]}
            if interval is not None:
                progress = {"count": initial + int((now - progress["t0"]) / interval), "t0": progress["t0"]}
            progress["count"] = min(progress["count"], len(segments))
            if not self.head:
                STATE.live[name] = progress
        revealed = progress["count"]
        first = max(0, revealed - window)
        target = max(1, math.ceil(max(round(d, 3) for _, d in segments)))
        lines = ["#EXTM3U", "#EXT-X-VERSION:3", f"#EXT-X-TARGETDURATION:{target}", f"#EXT-X-MEDIA-SEQUENCE:{first}"]
        prefix = urllib.parse.quote(name) + "/"
        for uri, duration in segments[first:revealed]:
            absolute = uri.startswith("/") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri)
            lines += [f"#EXTINF:{duration:.3f},", uri if absolute else prefix + uri]
        if self.query.get("end") == "1" and revealed == len(segments):
            lines.append("#EXT-X-ENDLIST")
        self.simple(200, "\n".join(lines) + "\n", content_type("live.m3u8"), headers=[("Cache-Control", "no-cache")])


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, root, tls_context):
        self.root = root
        self.tls_context = tls_context
        super().__init__(("127.0.0.1", 0), Handler)

    def finish_request(self, request, client_address):
        # Runs on the request's own thread, so a slow or failing handshake holds up nobody else.
        connection = request
        if self.tls_context is not None:
            try:
                request.settimeout(10)
                connection = self.tls_context.wrap_socket(request, server_side=True)
                connection.settimeout(None)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write(f"httpd.py: TLS handshake with {client_address} failed: {e}\n")
                sys.stderr.flush()
                return
        try:
            self.RequestHandlerClass(connection, client_address, self)
        finally:
            if connection is not request:
                self.close(connection)

    def shutdown_request(self, request):
        self.close(request)

    def close(self, connection):
        with RESET_LOCK:
            reset = id(connection) in RESET_SOCKETS
            RESET_SOCKETS.discard(id(connection))
        if not reset:
            try:
                connection.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        connection.close()

    def handle_error(self, request, client_address):
        sys.stderr.write(f"httpd.py: error serving {client_address}:\n")
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser(description="Tonearm's test HTTP server")
    parser.add_argument("root", help="the directory served")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve over TLS with this PEM certificate and key")
    args = parser.parse_args()
    root = os.path.realpath(args.root)
    if not os.path.isdir(root):
        parser.error(f"{args.root} is not a directory")
    servers = []
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        servers.append(Server(root, context))
    servers.append(Server(root, None))
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    ports = [s.server_address[1] for s in servers]
    emit(f"PORT {ports[0]} PLAIN {ports[1]}" if args.tls else f"PORT {ports[0]}")

    # Standard input is the test process's lifeline (a pipe it never writes to): its end — the
    # test stopped the server, or died — ends the server. Run by hand, close it with Ctrl-D.
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


if __name__ == "__main__":
    main()
