"""The HTTP face under hostile input (issue 9, items 8 and 10).

- Bytes that are not UTF-8 in a header, the path or the query answer a 4xx that names the field,
  never a 500 and never internal text (an exception's what()) in a header or the body.
- The logs endpoint takes `offset` and `attempt` only as whole numbers in range.
"""

import http.client
import json
import socket
import time
import unittest

import botocore.auth
import botocore.awsrequest
import botocore.credentials

from allot_harness import REGION, ServerTestCase

# A generous bound on any answer (unloaded, it is milliseconds).
ANSWER_BOUND_S = 5.0


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


if __name__ == "__main__":
    unittest.main()
