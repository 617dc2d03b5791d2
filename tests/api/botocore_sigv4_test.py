#!/usr/bin/env python3
"""Proves that allot::api::Verify accepts what the installed botocore signs, and refuses it changed.

Usage: botocore_sigv4_test.py <path to api_sigv4_verify_tool>

Part 1 signs requests directly with botocore.auth.SigV4Auth, as the brief's reference. Part 2 runs
a real botocore 'batch' client against a local HTTP server that captures the raw request line,
headers and body exactly as they arrive on the wire, then verifies each captured request.
"""
import datetime
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import unittest
from unittest import mock
from urllib.parse import urlsplit

import botocore.auth
import botocore.credentials
import botocore.session
from botocore.awsrequest import AWSRequest

TOOL = None
ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE'
SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
REGION = 'us-west-2'
ENDPOINT = 'http://127.0.0.1:8742'


def run_tool(method, target, headers, body, now_ms=None, access_key=ACCESS_KEY, secret=SECRET):
    """Feeds one request to the verify tool; returns its first stdout word and the full output."""
    path, _, query = target.partition('?')
    if isinstance(body, str):
        body = body.encode('utf-8')

    def hx(value):
        if isinstance(value, str):
            value = value.encode('utf-8')
        return value.hex() or '-'

    lines = [
        f'access_key {hx(access_key)}',
        f'secret {hx(secret)}',
        f'now_ms {int(time.time() * 1000) if now_ms is None else now_ms}',
        f'method {hx(method)}',
        f'path {hx(path)}',
        f'query {hx(query)}',
        f'body {hx(body or b"")}',
    ]
    lines += [f'header {hx(name)} {hx(value)}' for name, value in headers]
    proc = subprocess.run([TOOL], input='\n'.join(lines) + '\n', capture_output=True, text=True,
                          timeout=60, check=False)
    if proc.returncode != 0:
        raise AssertionError(f'tool failed ({proc.returncode}): {proc.stderr}')
    return proc.stdout.split()[0], proc.stdout + proc.stderr


class SigV4AuthDirect(unittest.TestCase):
    """botocore.auth.SigV4Auth on a SubmitServiceJob request shaped like boto3's."""

    BODY = json.dumps({'jobName': 'hello', 'jobQueue': 'default', 'serviceJobType': 'SAGEMAKER_TRAINING',
                       'serviceRequestPayload': '{"a": "b c"}'}).encode()

    def signed(self, when=None, url=ENDPOINT + '/v1/submitservicejob', method='POST', body=None):
        body = self.BODY if body is None else body
        headers = {
            'Content-Type': 'application/json',
            'User-Agent': 'Boto3/1.43.11 md/Botocore#1.43.11 ua/2.1 os/linux',
            'amz-sdk-invocation-id': '7d0b2c2e-3c49-4a2b-8d7e-2f1e4f7f9a10',
            'amz-sdk-request': 'attempt=1',
            'Content-Length': str(len(body)),
        }
        req = AWSRequest(method=method, url=url, data=body, headers=headers)
        creds = botocore.credentials.Credentials(ACCESS_KEY, SECRET)
        signer = botocore.auth.SigV4Auth(creds, 'batch', REGION)
        if when is None:
            signer.add_auth(req)
        else:
            with mock.patch('botocore.auth.get_current_datetime', return_value=when):
                signer.add_auth(req)
        parts = urlsplit(url)
        # What the HTTP client puts on the wire: the request headers plus Host.
        wire_headers = [('Host', parts.netloc)] + list(req.headers.items())
        target = parts.path + ('?' + parts.query if parts.query else '')
        return method, target, wire_headers, body

    def test_accepts_botocore_signature(self):
        code, out = run_tool(*self.signed())
        self.assertEqual(code, 'OK', out)
        self.assertIn(f'OK {ACCESS_KEY} {REGION} batch', out)

    def test_accepts_arn_path_and_repeated_query_keys(self):
        arn = 'arn%3Aaws%3Abatch%3Aus-west-2%3A123456789012%3Ajob-queue%2Fdefault'
        code, out = run_tool(*self.signed(
            url=f'{ENDPOINT}/v1/tags/{arn}?tagKeys=b&tagKeys=a%20b&tagKeys=a-b',
            method='DELETE', body=b''))
        self.assertEqual(code, 'OK', out)

    def test_rejects_modified_body(self):
        method, target, headers, body = self.signed()
        code, out = run_tool(method, target, headers, body.replace(b'hello', b'hellp'))
        self.assertEqual(code, 'InvalidSignatureException', out)
        self.assertIn('403', out)

    def test_rejects_modified_signed_header(self):
        method, target, headers, body = self.signed()
        headers = [(n, 'attempt=2' if n == 'amz-sdk-request' else v) for n, v in headers]
        code, out = run_tool(method, target, headers, body)
        self.assertEqual(code, 'InvalidSignatureException', out)

    def test_rejects_wrong_secret(self):
        code, out = run_tool(*self.signed(), secret='not-the-secret')
        self.assertEqual(code, 'InvalidSignatureException', out)

    def test_rejects_unknown_key(self):
        code, out = run_tool(*self.signed(), access_key='AKIAUNKNOWNKEY000000')
        self.assertEqual(code, 'UnrecognizedClientException', out)
        self.assertIn('The security token included in the request is invalid.', out)

    def test_rejects_clock_skew(self):
        when = datetime.datetime(2015, 8, 30, 12, 36, 0)
        now_ms = int(when.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
        request = self.signed(when=when)
        self.assertEqual(run_tool(*request, now_ms=now_ms + 14 * 60 * 1000)[0], 'OK')
        code, out = run_tool(*request, now_ms=now_ms + 16 * 60 * 1000)
        self.assertEqual(code, 'InvalidSignatureException', out)
        self.assertIn('Signature expired: 20150830T123600Z is now earlier than 20150830T123700Z '
                      '(20150830T125200Z - 15 min.)', out)

    def test_missing_authorization(self):
        method, target, headers, body = self.signed()
        headers = [(n, v) for n, v in headers if n.lower() != 'authorization']
        code, out = run_tool(method, target, headers, body)
        self.assertEqual(code, 'MissingAuthenticationTokenException', out)


class Captured:
    requests = []


class CaptureHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def _capture(self):
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else b''
        # self.path is the raw request target; self.headers keeps wire order and repeats.
        Captured.requests.append((self.command, self.path, list(self.headers.items()), body))
        payload = b'{}'
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = do_PUT = _capture

    def log_message(self, *args):  # keep the test output quiet
        pass


class RealBotocoreClient(unittest.TestCase):
    """A botocore 'batch' client sends real requests; each one as captured must verify."""

    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), CaptureHandler)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        port = cls.server.server_address[1]
        os.environ['AWS_CONFIG_FILE'] = os.devnull
        os.environ['AWS_SHARED_CREDENTIALS_FILE'] = os.devnull
        session = botocore.session.get_session()
        cls.client = session.create_client(
            'batch', region_name=REGION, endpoint_url=f'http://127.0.0.1:{port}',
            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET)

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def call_and_capture(self, call):
        Captured.requests.clear()
        call()
        self.assertEqual(len(Captured.requests), 1)
        return Captured.requests[0]

    def check(self, call, expect_target_prefix):
        method, target, headers, body = self.call_and_capture(call)
        self.assertTrue(target.startswith(expect_target_prefix), target)
        code, out = run_tool(method, target, headers, body)
        self.assertEqual(code, 'OK', out)
        if body:
            code, out = run_tool(method, target, headers, body[:-1] + b' ')
            self.assertEqual(code, 'InvalidSignatureException', out)
        return headers

    def test_submit_service_job(self):
        headers = self.check(lambda: self.client.submit_service_job(
            jobName='hello', jobQueue='default', serviceJobType='SAGEMAKER_TRAINING',
            serviceRequestPayload='{"TrainingJobName": "x y"}'), '/v1/submitservicejob')
        auth = dict((n.lower(), v) for n, v in headers)['authorization']
        # What botocore signs today: amz-sdk-*, User-Agent and Content-Length are added unsigned.
        self.assertIn('SignedHeaders=content-type;host;x-amz-date,', auth)

    def test_submit_job(self):
        self.check(lambda: self.client.submit_job(
            jobName='j', jobQueue='q', jobDefinition='d', parameters={'k': 'v w'}), '/v1/submitjob')

    def test_tag_resource_arn_in_path(self):
        arn = 'arn:aws:batch:us-west-2:123456789012:job-queue/default'
        self.check(lambda: self.client.tag_resource(resourceArn=arn, tags={'team': 'a b'}),
                   '/v1/tags/arn%3Aaws%3Abatch')

    def test_untag_resource_query(self):
        arn = 'arn:aws:batch:us-west-2:123456789012:job-queue/default'
        self.check(lambda: self.client.untag_resource(
            resourceArn=arn, tagKeys=['z', 'a b', 'a-b', 'ü']), '/v1/tags/arn%3A')

    def test_list_tags_get(self):
        arn = 'arn:aws:batch:us-west-2:123456789012:job-queue/default'
        self.check(lambda: self.client.list_tags_for_resource(resourceArn=arn), '/v1/tags/')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: botocore_sigv4_test.py <api_sigv4_verify_tool>')
    TOOL = sys.argv.pop(1)
    unittest.main(verbosity=2)
