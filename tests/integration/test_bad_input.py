"""Hostile and malformed input over the whole API (issue 9): every case answers 400
ClientException naming the field, nothing crashes or answers 5xx, and what was accepted before
is still there afterwards. The cases live as data in data/bad_requests.json; the deep, huge and
invalid-UTF-8 ones are generated here."""

import json
import os
import unittest
import urllib.error
import urllib.request

import botocore.auth
import botocore.awsrequest
import botocore.credentials

from allot_harness import REGION, ServerTestCase, payload

HERE = os.path.dirname(os.path.abspath(__file__))


def signed_post(server, action, data: bytes):
    """POST /v1/<action> with these exact body bytes, SigV4-signed: (status, headers, body)."""
    key, secret = server.credentials()
    url = f"{server.endpoint}/v1/{action}"
    req = botocore.awsrequest.AWSRequest(method="POST", url=url, data=data,
                                         headers={"Content-Type": "application/json"})
    botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch",
                            REGION).add_auth(req)
    http = urllib.request.Request(url, data=data, method="POST",
                                  headers=dict(req.prepare().headers.items()))
    try:
        with urllib.request.urlopen(http, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class BadInputTest(ServerTestCase):
    server_args = ("--no-sandbox",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.fx.environment(0)  # capacity 0: accepted jobs stay RUNNABLE
        cls.queue = cls.fx.queue(cls.env, cls.fx.policy())
        cls.share_arn = cls.fx.share(cls.queue, name="qs", capacity=1)
        cls.plain = cls.fx.queue(cls.fx.environment(0))
        cls.job = cls.fx.submit(cls.queue, "qs", name="kept")["jobId"]

    def good_payload(self):
        return json.loads(payload("exit 0"))

    def substitute(self, value):
        subs = {"$QUEUE": self.queue, "$PLAIN": self.plain, "$SHARE_ARN": self.share_arn,
                "$ENV": self.env, "$JOB": self.job, "$LONG_UNIT": "x" * 10000,
                "$LONG_REASON": "r" * 5000, "$GOOD_PAYLOAD": payload("exit 0")}
        if isinstance(value, str):
            for k in sorted(subs, key=len, reverse=True):
                value = value.replace(k, subs[k])
            return value
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        return value

    def body_of(self, case):
        if "body" in case:
            return self.substitute(case["body"])
        p = self.good_payload()
        p.update(case["payload_patch"])
        return {"jobName": "bad", "jobQueue": self.queue, "serviceJobType": "SAGEMAKER_TRAINING",
                "quotaShareName": "qs", "serviceRequestPayload": json.dumps(p)}

    def assert_client_error(self, status, headers, body, names, what):
        self.assertEqual(status, 400, f"{what}: {status} {body[:300]!r}")
        self.assertEqual(headers.get("x-amzn-ErrorType") or headers.get("X-Amzn-ErrorType"),
                         "ClientException", what)
        message = json.loads(body)["message"]
        for n in names:
            self.assertIn(n, message, f"{what}: message {message!r} should name {n!r}")
        self.assertNotIn("nlohmann", message)
        self.assertNotIn("exception", message.lower())

    def assert_nothing_lost(self):
        d = self.fx.describe(self.job)
        self.assertEqual(d["status"], "RUNNABLE")
        names = [q["jobQueueName"] for q in self.batch.describe_job_queues()["jobQueues"]]
        self.assertIn(self.queue, names)
        self.assertIn(self.plain, names)

    def test_corpus(self):
        with open(os.path.join(HERE, "data", "bad_requests.json")) as f:
            cases = json.load(f)["cases"]
        self.assertGreater(len(cases), 40)
        for i, case in enumerate(cases):
            with self.subTest(i=i, action=case["action"], names=case["names"]):
                data = json.dumps(self.body_of(case)).encode()
                status, headers, body = signed_post(self.server, case["action"], data)
                self.assert_client_error(status, headers, body, case["names"], f"case {i}")
        self.assert_nothing_lost()

    def test_deep_nesting_in_an_unknown_field(self):
        deep = "[" * 32700 + "]" * 32700
        body = json.dumps({"jobName": "deep", "jobQueue": self.queue, "quotaShareName": "qs",
                           "serviceJobType": "SAGEMAKER_TRAINING",
                           "serviceRequestPayload": payload("exit 0")})
        data = (body[:-1] + ', "unknown": ' + deep + "}").encode()
        self.assertLess(len(data), 64 * 1024 + 2000)
        status, headers, out = signed_post(self.server, "submitservicejob", data)
        self.assertIn(status, (400, 413), out[:200])
        if status == 400:
            self.assert_client_error(status, headers, out, ["64"], "deep unknown field")
        self.assert_nothing_lost()

    def test_deep_nesting_in_named_fields_of_every_kind(self):
        deep = "[" * 30000 + "]" * 30000
        for action, field in (("createserviceenvironment", "capacityLimits"),
                              ("createquotashare", "capacityLimits"),
                              ("submitservicejob", "tags"),
                              ("listservicejobs", "filters"),
                              ("describejobqueues", "jobQueues"),
                              ("updateservicejob", "schedulingPriority")):
            with self.subTest(action=action, field=field):
                data = ('{"' + field + '": ' + deep + "}").encode()
                status, headers, out = signed_post(self.server, action, data)
                self.assert_client_error(status, headers, out, ["64"], f"{action}.{field}")
        self.assert_nothing_lost()

    def test_deep_nesting_inside_the_payload_string(self):
        p = self.good_payload()
        text = json.dumps(p)[:-1] + ', "Deep": ' + "[" * 5000 + "]" * 5000 + "}"
        status, headers, out = signed_post(self.server, "submitservicejob", json.dumps(
            {"jobName": "deep2", "jobQueue": self.queue, "quotaShareName": "qs",
             "serviceJobType": "SAGEMAKER_TRAINING", "serviceRequestPayload": text}).encode())
        self.assert_client_error(status, headers, out, ["serviceRequestPayload"], "deep payload")

    def test_invalid_utf8_in_a_field(self):
        for raw in (b'{"jobQueue": "\xff\xfe"}', b'{"jobName": "a\xc3", "jobQueue": "q"}'):
            with self.subTest(raw=raw):
                status, headers, out = signed_post(self.server, "listservicejobs", raw)
                self.assertEqual(status, 400, out[:200])
                message = json.loads(out)["message"]
                self.assertIn("UTF-8", message)
        self.assert_nothing_lost()

    def test_numbers_beyond_every_integer_type(self):
        for number in ("123456789012345678901234567890", "9.5", "-0.0", "18446744073709551616"):
            with self.subTest(number=number):
                data = ('{"jobQueue": "%s", "maxResults": %s}' % (self.queue, number)).encode()
                status, headers, out = signed_post(self.server, "listservicejobs", data)
                self.assert_client_error(status, headers, out, ["maxResults"], number)
        # Beyond a double: not JSON a decoder can hold; refused as such, with its position.
        for number in ("1e400", "-1e400"):
            with self.subTest(number=number):
                data = ('{"jobQueue": "%s", "maxResults": %s}' % (self.queue, number)).encode()
                status, headers, out = signed_post(self.server, "listservicejobs", data)
                self.assert_client_error(status, headers, out, ["out of range"], number)


if __name__ == "__main__":
    unittest.main()
