"""The HTTP face under hostile input (issue 9, items 8, 10 and 11).

- Bytes that are not UTF-8 in a header, the path or the query answer a 4xx that names the field,
  never a 500 and never internal text (an exception's what()) in a header or the body.
- The logs endpoint takes `offset` and `attempt` only as whole numbers in range.
- Slow, unauthenticated connections that trickle their headers a byte a second neither starve
  /healthz nor the API; the server closes them after its header (or body) read deadline, and
  a client address holds at most 16 connections that are still reading a request: a newer one
  closes the oldest.
- All of loopback (127.0.0.0/8) is one client address for those limits: a job on the machine
  (no credentials) that sends half requests from 127.x.y.z, more of them than the server takes
  connections, locks out neither /healthz nor a signed call (the hostile-team trial's F3).
- At a cap with no idle and no reading connection to close, a newcomer is answered 503 and
  closed, unless an answer has waited 2 s for a client that does not read it: that connection
  is closed instead.

The slow clients bind 127.x.y.z source addresses before connecting; the server counts them all
as 127.0.0.1, the address of the well-behaved clients.
"""

import http.client
import json
import select
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import botocore.auth
import botocore.awsrequest
import botocore.credentials

from allot_harness import REGION, ServerTestCase, allot_bin, wait_for

# The server's defaults (src/server/options.h).
HEADER_DEADLINE_S = 10
BODY_DEADLINE_S = 30
PER_ADDRESS_CAP = 64
TOTAL_CAP = 1024
# Connections still reading a request, per client address (src/server/http_server.cc).
READING_PER_ADDRESS = 16
# The generous bound on an answer while slow clients are connected (unloaded, it is milliseconds).
ANSWER_BOUND_S = 5.0


def signed_request_bytes(server, target):
    """A GET of `target` signed with SigV4 as botocore signs it, as the bytes a client sends."""
    key, secret = server.credentials()
    req = botocore.awsrequest.AWSRequest(method="GET", url=server.endpoint + target)
    botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                            REGION).add_auth(req)
    lines = [f"GET {target} HTTP/1.1"]
    lines += [f"{k}: {v}" for k, v in req.prepare().headers.items()]
    if "host" not in {k.lower() for k in req.headers.keys()}:
        lines.append(f"Host: 127.0.0.1:{server.port}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def signed_call(server, method, target, body=b"", headers=None, timeout=ANSWER_BOUND_S):
    """Sends `method target` (target exactly as on the wire, percent-encoding and all) signed with
    SigV4 the way botocore signs; returns (status, {lowercase header: value}, body bytes)."""
    key, secret = server.credentials()
    req = botocore.awsrequest.AWSRequest(method=method, url=server.endpoint + target, data=body,
                                         headers=dict(headers or {}))
    botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                            REGION).add_auth(req)
    prepared = req.prepare()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        sent = {k.lower() for k in prepared.headers.keys()}
        if "host" not in sent:
            conn.putheader("Host", f"127.0.0.1:{server.port}")
        for k, v in prepared.headers.items():
            conn.putheader(k, v)
        if body and "content-length" not in sent:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def raw_exchange(port, data, timeout=ANSWER_BOUND_S):
    """Sends raw bytes on a fresh connection and reads until the server closes (bounded)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
        return out


def parse_response(raw):
    """(status, {lowercase header: value bytes}, body bytes) of one raw HTTP/1.1 response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower().decode("latin-1")] = value.strip()
    return status, headers, body


class NoInternalsMixin:
    def assert_clean_error(self, status, headers, body, want_status, field=None):
        """A JSON error as AWS sends it, with nothing of an exception's text anywhere."""
        def text(v):
            return v.decode("latin-1") if isinstance(v, bytes) else v
        self.assertEqual(status, want_status, (headers, body))
        for name, value in headers.items():
            self.assertNotIn("exception_what", name.lower(), headers)
            self.assertNotIn("json.exception", text(value), headers)
        self.assertNotIn(b"json.exception", body)
        self.assertNotIn(b"\xff", body)
        doc = json.loads(body.decode("utf-8"))  # valid UTF-8 and valid JSON
        self.assertIn("__type", doc)
        self.assertIn("message", doc)
        self.assertEqual(text(headers.get("x-amzn-errortype")), doc["__type"])
        if field is not None:
            self.assertEqual(doc["__type"], "ClientException", doc)
            self.assertIn(field, doc["message"])
            self.assertIn("UTF-8", doc["message"])
        return doc


class InvalidUtf8Test(NoInternalsMixin, ServerTestCase):
    """Item 8."""

    def arn(self):
        return self.fx.policy()

    def test_unauthenticated_authorization_header_with_invalid_bytes(self):
        for credential in (b"\xff\xfe", b"AKIA\xff", b"\xc3"):
            with self.subTest(credential=credential):
                raw = raw_exchange(
                    self.server.port,
                    b"POST /v1/listservicejobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Authorization: AWS4-HMAC-SHA256 Credential=" + credential +
                    b"/20260101/local/batch/aws4_request, SignedHeaders=host, Signature=00\r\n"
                    b"X-Amz-Date: 20260101T000000Z\r\n"
                    b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
                status, headers, body = parse_response(raw)
                self.assertIn(status, (400, 403), raw)
                self.assert_clean_error(status, headers, body, status)

    def test_unauthenticated_other_headers_with_invalid_bytes(self):
        for header in (b"X-Amz-Date: 2026\xff0101T000000Z", b"X-Amz-Content-Sha256: \xff",
                       b"Authorization: \xff\xff"):
            with self.subTest(header=header):
                raw = raw_exchange(
                    self.server.port,
                    b"POST /v1/listservicejobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header +
                    b"\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                status, headers, body = parse_response(raw)
                self.assertIn(status, (400, 403), raw)
                self.assert_clean_error(status, headers, body, status)

    def test_tags_arn_with_invalid_utf8(self):
        target = "/v1/tags/" + self.arn().replace(":", "%3A").replace("/", "%2F") + "%FF"
        for method, body in (("GET", b""), ("POST", b'{"tags":{"a":"b"}}'), ("DELETE", b"")):
            with self.subTest(method=method):
                t = target + ("?tagKeys=a" if method == "DELETE" else "")
                status, headers, data = signed_call(self.server, method, t, body,
                                                    {"Content-Type": "application/json"})
                self.assert_clean_error(status, headers, data, 400, field="resourceArn")

    def test_untag_key_with_invalid_utf8(self):
        target = "/v1/tags/" + self.arn().replace(":", "%3A").replace("/", "%2F")
        status, headers, data = signed_call(self.server, "DELETE", target + "?tagKeys=%FF")
        self.assert_clean_error(status, headers, data, 400, field="tagKeys")
        status, headers, data = signed_call(self.server, "DELETE",
                                            target + "?tagKeys=ok&tagKeys=b%C3")
        self.assert_clean_error(status, headers, data, 400, field="tagKeys")

    def test_logs_path_and_query_with_invalid_utf8(self):
        for target, field in (("/allot/v1/jobs/%FF/logs", "jobId"),
                              ("/allot/v1/jobs/x/logs?host=algo-%FF", "host"),
                              ("/allot/v1/jobs/x/logs?stream=%FE", "stream"),
                              ("/allot/v1/jobs/x/logs?offset=%FF", "offset")):
            with self.subTest(target=target):
                status, headers, data = signed_call(self.server, "GET", target)
                self.assert_clean_error(status, headers, data, 400, field=field)

    def test_allot_routes_refuse_a_repeated_or_unknown_query_parameter(self):
        # Before, a repeated parameter was read as its first value and an unknown one ignored:
        # a caller who filtered the report by queue got every queue's figures.
        for target, field in (("/allot/v1/jobs/x/logs?stream=stdout&stream=stderr", "stream"),
                              ("/allot/v1/report?queue=nope", "queue"),
                              ("/allot/v1/history/jobs?queue=%FF", "queue"),
                              ("/allot/v1/users?maxResults=0", "maxResults"),
                              ("/allot/v1/jobs/x/explain?verbose=1", "verbose"),
                              ("/allot/v1/audit?maxResults=5&maxResults=6", "maxResults")):
            with self.subTest(target=target):
                status, headers, data = signed_call(self.server, "GET", target)
                doc = self.assert_clean_error(status, headers, data, 400)
                self.assertEqual(doc["__type"], "ClientException", doc)
                self.assertIn(field, doc["message"])
                self.assertRegex(doc["message"], "more than once|this call takes")

    def test_body_with_invalid_utf8(self):
        status, headers, data = signed_call(self.server, "POST", "/v1/describejobqueues",
                                            b'{"jobQueues":["q\xff"]}',
                                            {"Content-Type": "application/json"})
        doc = self.assert_clean_error(status, headers, data, 400)
        self.assertEqual(doc["__type"], "ClientException")

    def test_server_still_answers_after_the_bad_requests(self):
        self.test_unauthenticated_authorization_header_with_invalid_bytes()
        self.assertIn("schedulingPolicies", self.batch.list_scheduling_policies())


class LogsQueryNumbersTest(NoInternalsMixin, ServerTestCase):
    """Item 10: offset and attempt are whole numbers in range."""

    server_args = ("--no-sandbox",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        queue, _ = cls.fx.qm_queue(capacity=1)
        cls.job = cls.fx.submit(queue, "qs", script="echo hello")["jobId"]
        cls.fx.wait_status(cls.job, ("SUCCEEDED", "FAILED"), timeout=60)

    def logs(self, query):
        return signed_call(self.server, "GET", f"/allot/v1/jobs/{self.job}/logs?{query}")

    def test_good_offsets(self):
        status, _, data = self.logs("offset=0")
        self.assertEqual(status, 200, data)
        self.assertEqual(json.loads(data)["text"], "hello\n")
        status, _, data = self.logs("offset=3&attempt=1")
        self.assertEqual(status, 200, data)
        self.assertEqual(json.loads(data)["text"], "lo\n")
        self.assertEqual(json.loads(data)["nextOffset"], 6)

    def test_refused_numbers_name_the_parameter(self):
        for name in ("offset", "attempt"):
            for value in ("-1", "1e3", "18446744073709551617", "", "%2B1", "0x10", "%201", "1.0",
                          "99999999999999999999999"):
                with self.subTest(name=name, value=value):
                    status, headers, data = self.logs(f"{name}={value}")
                    doc = self.assert_clean_error(status, headers, data, 400)
                    self.assertEqual(doc["__type"], "ClientException")
                    self.assertIn(name, doc["message"])


class SlowClients:
    """n connections from `source` (an address, or a list of them taken in turn) that send a
    partial request a byte a second and never finish it. A background thread trickles the bytes
    and notes when the server closes each one; it stops after `max_seconds` whatever happens."""

    REQUEST = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200)

    def __init__(self, port, n, source="127.0.0.1", max_seconds=60.0, body=False):
        self.port = port
        self.socks = []
        self.closed_at = {}
        self.answers = {}
        self.started = time.monotonic()
        self.max_seconds = max_seconds
        self.sent = 0
        self.body = body
        self._stop = threading.Event()
        sources = [source] if isinstance(source, str) else list(source)
        self._lock = threading.Lock()  # the poll of the test's thread and of the trickling one
        for i in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(True)
            s.settimeout(ANSWER_BOUND_S)
            s.bind((sources[i % len(sources)], 0))
            s.connect(("127.0.0.1", port))
            if body:  # complete headers, then a body that trickles
                s.sendall(b"POST /v1/listservicejobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{")
            else:
                s.sendall(self.REQUEST[:1])
            self.socks.append(s)
        self.sent = 1
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _poll_closed(self):
        # poll, not select: there may be more sockets than select's 1,024 descriptors.
        with self._lock:
            by_fd = {s.fileno(): s for s in self.socks if s not in self.closed_at}
            if not by_fd:
                return
            poller = select.poll()
            for fd in by_fd:
                poller.register(fd, select.POLLIN)
            for fd, _ in poller.poll(0):
                s = by_fd[fd]
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if data:
                    self.answers[s] = self.answers.get(s, b"") + data
                else:
                    self.closed_at[s] = time.monotonic() - self.started

    def _run(self):
        while not self._stop.is_set() and time.monotonic() - self.started < self.max_seconds:
            self._poll_closed()
            byte = b"a" if self.body else self.REQUEST[self.sent:self.sent + 1] or b"a"
            for s in self.socks:
                with self._lock:
                    if s in self.closed_at:
                        continue
                    try:
                        s.send(byte)
                    except OSError:
                        self.closed_at[s] = time.monotonic() - self.started
            self.sent += 1
            self._stop.wait(1.0)

    def open_count(self):
        return len(self.socks) - len(self.closed_at)

    def open_now(self):
        """How many the server has not closed, by a fresh look."""
        self._poll_closed()
        return self.open_count()

    def served(self):
        """The answers that served a slow connection's request (2xx): the tests want none."""
        return [data for data in self.answers.values() if data.startswith(b"HTTP/1.1 2")]

    def all_closed(self):
        self._poll_closed()
        return len(self.closed_at) == len(self.socks)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        for s in self.socks:
            s.close()


def healthz(port, source="127.0.0.1", timeout=ANSWER_BOUND_S):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


class SlowClientsTest(ServerTestCase):
    """Item 11."""

    def setUp(self):
        self.slow = []

    def tearDown(self):
        for s in self.slow:
            s.close()

    def open_slow(self, n, source="127.0.0.1", **kwargs):
        s = SlowClients(self.server.port, n, source, **kwargs)
        self.slow.append(s)
        return s

    def assert_answers_while_open(self, slow):
        time.sleep(2)  # every slow connection accepted and trickling
        self.assertEqual(healthz(self.server.port), (200, b"ok\n"))
        status, _, data = signed_call(self.server, "POST", "/v1/listservicejobs",
                                      b'{"jobStatus":"RUNNABLE","jobQueue":"none"}',
                                      {"Content-Type": "application/json"})
        self.assertIn(status, (200, 400), data)  # answered (the queue does not exist)
        self.assertGreater(sum(x.open_count() for x in slow), 0,
                           "the slow clients were gone before the answers came")

    def test_40_slow_clients_from_one_address(self):
        slow = self.open_slow(40)
        self.assert_answers_while_open([slow])

    def test_200_slow_clients(self):
        groups = [self.open_slow(50, f"127.0.0.{k}") for k in range(2, 6)]
        self.assert_answers_while_open(groups)
        c = self.server.client(retries=1, read_timeout=ANSWER_BOUND_S)
        self.assertIn("schedulingPolicies", c.list_scheduling_policies())

    def test_slow_headers_and_body_are_closed_after_the_deadlines(self):
        # 15: within the reading budget of loopback, so that only the deadlines close them.
        headers = self.open_slow(10, "127.0.0.6", max_seconds=HEADER_DEADLINE_S + 20)
        bodies = self.open_slow(5, "127.0.0.7", max_seconds=BODY_DEADLINE_S + 20, body=True)
        wait_for(headers.all_closed, timeout=HEADER_DEADLINE_S + 15, interval=0.5,
                 what="the server to close connections that trickle their headers")
        self.assertTrue(all(t > HEADER_DEADLINE_S / 2 for t in headers.closed_at.values()),
                        headers.closed_at)
        self.assertEqual(healthz(self.server.port), (200, b"ok\n"))
        wait_for(bodies.all_closed, timeout=BODY_DEADLINE_S + 15, interval=0.5,
                 what="the server to close connections that trickle their body")
        for s, data in list(headers.answers.items()) + list(bodies.answers.items()):
            self.assertFalse(data.startswith(b"HTTP/1.1 200"), data)

    def test_a_new_connection_beyond_the_reading_budget_closes_the_oldest(self):
        # Two loopback addresses, one client for the server's limits.
        held = self.open_slow(READING_PER_ADDRESS, "127.0.0.8", max_seconds=HEADER_DEADLINE_S)
        time.sleep(1)
        newer = self.open_slow(10, "127.0.0.9", max_seconds=HEADER_DEADLINE_S)
        oldest, rest = held.socks[:10], held.socks[10:]
        wait_for(lambda: held.open_now() == READING_PER_ADDRESS - 10, timeout=ANSWER_BOUND_S,
                 interval=0.2, what="the 10 oldest slow connections to be closed")
        self.assertEqual(set(held.closed_at), set(oldest))  # the oldest, not just any 10
        self.assertTrue(all(s not in held.closed_at for s in rest))
        self.assertEqual(newer.open_now(), 10)
        self.assertEqual(held.answers, {})  # closed without an answer, as on a deadline
        self.assertEqual(healthz(self.server.port), (200, b"ok\n"))
        self.assertEqual(healthz(self.server.port, source="127.0.0.9"), (200, b"ok\n"))

    def test_half_requests_from_many_loopback_addresses_lock_out_no_caller(self):
        """F3: more half-sent requests than the server's connection cap, 11 from each of 100
        loopback addresses (a job can use any of 127/8; each address was counted alone, each
        under its cap of 64, and together they took all 1,024 connections)."""
        sources = [f"127.0.5.{n}" for n in range(1, 101)]
        slow = self.open_slow(TOTAL_CAP + 76, sources, max_seconds=HEADER_DEADLINE_S + 15)
        self.assert_callers_served_and_slow_ones_closed(slow)

    def test_half_requests_from_the_callers_own_address_lock_it_out_not(self):
        """As many half-sent requests from 127.0.0.1 as its per-address cap: every local CLI user
        and job connects from there too."""
        slow = self.open_slow(PER_ADDRESS_CAP, "127.0.0.1", max_seconds=HEADER_DEADLINE_S + 15)
        self.assert_callers_served_and_slow_ones_closed(slow)

    def assert_callers_served_and_slow_ones_closed(self, slow):
        time.sleep(1)  # every slow connection accepted and trickling
        for source in ("127.0.0.1", "127.0.0.77"):
            self.assertEqual(healthz(self.server.port, source=source), (200, b"ok\n"), source)
        status, _, data = signed_call(self.server, "POST", "/v1/describejobqueues", b"{}",
                                      {"Content-Type": "application/json"})
        self.assertEqual(status, 200, data)
        fresh = self.server.client(retries=1, read_timeout=ANSWER_BOUND_S)
        self.assertIn("jobQueues", fresh.describe_job_queues())
        self.assertGreater(slow.open_now(), 0, "the slow clients were gone before the answers came")
        # Beyond the reading budget they were closed as newer ones came, the rest at the header
        # deadline; none was answered.
        self.assertLessEqual(slow.open_now(), READING_PER_ADDRESS)
        wait_for(slow.all_closed, timeout=HEADER_DEADLINE_S + 10, interval=0.5,
                 what="the server to close every slow connection")
        self.assertEqual(slow.served(), [])


class HttpFlagsTest(SlowClientsTest):
    """The limits are `allot server` flags: a shorter header deadline and a smaller per-address
    cap than the defaults take effect."""

    server_args = ("--http-header-timeout-seconds", "2", "--http-max-connections-per-address", "3",
                   "--http-threads", "4")

    # The inherited tests assume the default limits.
    test_40_slow_clients_from_one_address = None
    test_200_slow_clients = None
    test_slow_headers_and_body_are_closed_after_the_deadlines = None
    test_a_new_connection_beyond_the_reading_budget_closes_the_oldest = None
    test_half_requests_from_many_loopback_addresses_lock_out_no_caller = None
    test_half_requests_from_the_callers_own_address_lock_it_out_not = None

    def test_flags_set_the_header_deadline_and_the_per_address_cap(self):
        held = self.open_slow(3, "127.0.0.10", max_seconds=30)
        time.sleep(0.5)
        # A cap of 3 is a reading budget of 3: the two newer ones close the two oldest.
        extra = self.open_slow(2, "127.0.0.10", max_seconds=30)
        wait_for(lambda: held.open_now() == 1, timeout=ANSWER_BOUND_S, interval=0.2,
                 what="the oldest two of 3 closed by 2 more (--http-max-connections-per-address 3)")
        self.assertNotIn(held.socks[2], held.closed_at)
        self.assertEqual(held.answers, {})
        # The default deadline is 10 s; with 2 s the rest are closed well before it.
        wait_for(lambda: held.all_closed() and extra.all_closed(), timeout=8, interval=0.2,
                 what="trickling headers closed after --http-header-timeout-seconds 2")
        self.assertTrue(all(1 <= t < 8 for t in extra.closed_at.values()), extra.closed_at)
        self.assertEqual(healthz(self.server.port), (200, b"ok\n"))

    def test_at_the_cap_with_nothing_to_close_a_newcomer_is_answered_503(self):
        """The per-address cap (3 here) held by connections that are neither idle nor reading a
        request: each is writing a log chunk (1 MiB of control bytes, about 6 MiB of JSON) to a
        client that reads nothing. For the first 2 s of such a write, a newcomer closes nobody:
        it is answered 503 and closed. After that, each newcomer closes the connection whose
        answer has waited longest, so clients that read nothing hold the cap for 2 s, not for
        the 30 s write deadline."""
        with open("/proc/sys/net/ipv4/tcp_wmem") as f:
            if int(f.read().split()[2]) >= 6 << 20:
                self.skipTest("a socket's send buffer here holds a whole 6 MiB answer")
        queue, _ = self.fx.qm_queue()
        job = self.fx.submit(queue, share="qs",
                             script="head -c 1048576 /dev/zero | tr '\\0' '\\1'")["jobId"]
        self.fx.wait_status(job, "SUCCEEDED")
        request = signed_request_bytes(self.server, f"/allot/v1/jobs/{job}/logs")
        stalled = []
        try:
            for _ in range(3):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # reads nothing
                s.connect(("127.0.0.1", self.server.port))
                s.sendall(request)
                stalled.append(s)
            time.sleep(0.3)  # each request read whole, its answer filling the socket's buffers
            # The answer comes at the accept, before any request: read it without sending one
            # (a request sent after it may meet a closed socket).
            for source in ("127.0.0.1", "127.0.0.13"):
                with socket.create_connection(("127.0.0.1", self.server.port), timeout=5,
                                              source_address=(source, 0)) as newcomer:
                    answer = b""
                    while chunk := newcomer.recv(4096):
                        answer += chunk
                self.assertTrue(answer.startswith(b"HTTP/1.1 503"), (source, answer))
            time.sleep(2.5)  # now stalled: a newcomer takes the oldest one's place
            self.assertEqual(healthz(self.server.port), (200, b"ok\n"))
            # One of them (whose answer began first: the workers may take the requests in any
            # order) was closed.
            self.assertEqual(sum(self.cut_off(s) for s in stalled), 1)
            # That made room for one: the next caller takes it, and no more are cut off.
            self.assertEqual(healthz(self.server.port, source="127.0.0.14"), (200, b"ok\n"))
            self.assertEqual(sum(self.cut_off(s) for s in stalled), 1)
        finally:
            for s in stalled:
                s.close()
        wait_for(lambda: healthz(self.server.port) == (200, b"ok\n"), timeout=ANSWER_BOUND_S,
                 interval=0.2, what="callers served once the stalled connections are gone")
        self.assertIn("jobQueues", self.server.client(retries=1).describe_job_queues())

    def cut_off(self, sock):
        """Whether the server has closed its end of `sock` (without reading from it: that would
        take the answer): closed with its answer unsent, the server's socket waits in FIN_WAIT1
        (/proc/net/tcp's state 04), an open one is ESTABLISHED (01)."""
        ours = sock.getsockname()[1]
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                local, remote, state = fields[1], fields[2], fields[3]
                if (int(local.split(":")[1], 16) == self.server.port
                        and int(remote.split(":")[1], 16) == ours):
                    return state != "01"
        return True  # gone altogether

    def test_out_of_range_values_are_refused_at_start(self):
        for flag, value in (("--http-threads", "0"), ("--http-header-timeout-seconds", "0"),
                            ("--http-max-connections", "-1")):
            with tempfile.TemporaryDirectory() as data:
                r = subprocess.run([allot_bin(), "server", "--data-dir", data,
                                    "--listen", "127.0.0.1:0", flag, value],
                                   capture_output=True, text=True, timeout=30)
            self.assertNotEqual(r.returncode, 0, (flag, value))
            self.assertIn(flag, r.stderr + r.stdout, (flag, value))


class WireShapeTest(ServerTestCase):
    """What the HTTP layer answers by itself stays as it was."""

    def test_body_over_64_kib_is_413_as_a_client_exception(self):
        # An SDK reads the error type from x-amzn-ErrorType: before, a bare 413 that botocore
        # raised as an error with code "413".
        raw = raw_exchange(self.server.port,
                           b"POST /v1/listschedulingpolicies HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Length: 70000\r\n\r\n" + b"a" * 70000)
        status, headers, body = parse_response(raw)
        self.assertEqual(status, 413, raw[:200])
        self.assertEqual(headers.get("x-amzn-errortype"), b"ClientException", raw[:300])
        doc = json.loads(body.decode("utf-8"))
        self.assertEqual(doc["__type"], "ClientException")
        self.assertIn("65536 bytes", doc["message"])

    def test_a_request_that_is_not_http_is_400_as_a_client_exception(self):
        raw = raw_exchange(self.server.port, b"POST /v1/x HTTP/1.1\r\nHost x\r\n\r\n")
        status, headers, body = parse_response(raw)
        self.assertEqual(status, 400, raw[:300])
        self.assertEqual(headers.get("x-amzn-errortype"), b"ClientException", raw[:300])
        self.assertEqual(json.loads(body.decode("utf-8"))["__type"], "ClientException")

    def test_unknown_path_is_404_and_unsigned_call_403(self):
        raw = raw_exchange(self.server.port,
                           b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertEqual(parse_response(raw)[0], 404, raw)
        raw = raw_exchange(self.server.port,
                           b"POST /v1/listschedulingpolicies HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
        status, headers, body = parse_response(raw)
        self.assertEqual(status, 403, raw)
        self.assertEqual(headers["x-amzn-errortype"], b"MissingAuthenticationTokenException")
        self.assertEqual(json.loads(body)["__type"], "MissingAuthenticationTokenException")

    def test_keep_alive_serves_many_requests_on_one_connection(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=ANSWER_BOUND_S)
        try:
            for _ in range(20):
                conn.request("GET", "/healthz")
                r = conn.getresponse()
                self.assertEqual((r.status, r.read()), (200, b"ok\n"))
            conn.request("HEAD", "/healthz")
            r = conn.getresponse()
            self.assertEqual((r.status, r.read()), (200, b""))
        finally:
            conn.close()

    def test_second_server_on_the_same_port_fails_to_bind(self):
        with tempfile.TemporaryDirectory(prefix="allot-it-") as data:
            p = subprocess.run([allot_bin(), "server", "--data-dir", data, "--listen",
                                f"127.0.0.1:{self.server.port}"],
                               capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(b"cannot listen", p.stdout + p.stderr)
        self.assertEqual(healthz(self.server.port), (200, b"ok\n"))


if __name__ == "__main__":
    unittest.main()
