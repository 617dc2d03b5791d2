"""The dashboard at /ui/ (issue 12, section 5) against a real server, in a real browser.

The static files: content types, the CSP, /ui -> /ui/, the index for a page's address, 404 for a
missing file, 400 for a path that climbs out. Then dashboard.mjs drives Debian's chromium
(headless, through playwright-core from the build's web/node_modules) through the story: the admin
signs in, team-a borrows team-b's idle instance, team-b's submission reclaims it, and the bars and
the borrowing job's timeline change; the explanation opens; a team-b member cannot see team-a's job
nor its logs but sees their own. Screenshots go to $ALLOT_UI_ARTIFACTS (the build's
tests/ui-artifacts).
"""

import http.client
import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from allot_harness import AllotServer, Fixture, INSTANCE, allot_bin  # noqa: E402

CHROMIUM = os.environ.get("ALLOT_CHROMIUM", "/usr/bin/chromium")
WEB_BUILD = os.environ.get("ALLOT_WEB_BUILD", os.path.join(HERE, "..", "..", "build", "dev", "web"))
ARTIFACTS = os.environ.get("ALLOT_UI_ARTIFACTS",
                           os.path.join(HERE, "..", "..", "build", "dev", "tests", "ui-artifacts"))


def member_policy(share):
    """docs/policies/team-member.json for queue q and `share` (as scripts/run.sh makes them)."""
    with open(os.path.join(HERE, "..", "..", "docs", "policies", "team-member.json")) as f:
        return json.loads(f.read().replace("team-a", share))


class DashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        args = ["--stop-grace-seconds", "2"]
        # A usage sample every second, so the utilization chart has points within the test.
        help_text = subprocess.run([allot_bin(), "server", "--help"], capture_output=True,
                                   text=True, timeout=30).stdout
        if "--history-interval-seconds" in help_text:
            args += ["--history-interval-seconds", "1"]
        cls.server = AllotServer(*args)
        try:
            cls.server.start()
        except Exception:
            cls.server.cleanup()
            raise
        cls.batch = cls.server.client()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def get(self, path, method="GET"):
        """The raw answer to a request for `path`, sent as written (no normalization)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            conn.endheaders()
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def test_static_files(self):
        status, headers, body = self.get("/ui/")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "text/html; charset=utf-8")
        self.assertIn(b'src="/ui/app.js"', body)
        csp = headers["content-security-policy"]
        self.assertIn("default-src 'none'", csp)
        self.assertIn("script-src 'self'", csp)
        self.assertIn("connect-src 'self'", csp)
        self.assertNotIn("unsafe", csp)
        self.assertEqual(headers["x-content-type-options"], "nosniff")
        status, headers, body = self.get("/ui/app.js")
        self.assertEqual((status, headers["content-type"]), (200, "text/javascript; charset=utf-8"))
        self.assertGreater(len(body), 10000)
        status, headers, _ = self.get("/ui/app.css")
        self.assertEqual((status, headers["content-type"]), (200, "text/css; charset=utf-8"))
        status, headers, _ = self.get("/ui")
        self.assertEqual((status, headers["location"]), (301, "/ui/"))
        # A page's address (a link into the dashboard) is the index; a missing file is not.
        status, _, body = self.get("/ui/jobs/some-job")
        self.assertEqual(status, 200)
        self.assertIn(b"/ui/app.js", body)
        self.assertEqual(self.get("/ui/missing.js")[0], 404)
        self.assertEqual(self.get("/ui/app.js", method="HEAD")[0], 200)
        # Out of /ui/: refused whether written plainly or percent-encoded.
        for path in ("/ui/../credentials", "/ui/%2e%2e/credentials", "/ui/a/%2E%2E/%2e%2e/x",
                     "/ui/..%2fcredentials", "/ui/a%5c..%5cb"):
            self.assertEqual(self.get(path)[0], 400, path)
        # The files need no key; the API still does.
        self.assertEqual(self.get("/v1/describejobqueues", method="POST")[0], 403)

    def make_user(self, name, policy):
        status, out, _ = self.server.request("POST", "/allot/v1/users",
                                             {"userName": name, "policy": policy})
        self.assertEqual(status, 200, out)
        return {"id": out["accessKey"]["accessKeyId"], "secret": out["accessKey"]["secretAccessKey"]}

    def test_story_in_chromium(self):
        if not os.access(CHROMIUM, os.X_OK):
            self.fail(f"{CHROMIUM} is missing: scripts/install-deps.sh installs Debian's chromium")
        modules = os.path.join(WEB_BUILD, "node_modules")
        self.assertTrue(os.path.isdir(os.path.join(modules, "playwright-core")),
                        f"{modules} has no playwright-core: build the allot_ui target first")
        fx = Fixture(self.batch)
        env = fx.environment(capacity=2, name="se")
        queue = fx.queue(env, fx.policy(name="pol"), name="q")
        fx.share(queue, name="team-a", capacity=1, strategy="LEND_AND_BORROW", borrow_limit=200)
        fx.share(queue, name="team-b", capacity=1, strategy="LEND")
        admin_id, admin_secret = self.server.credentials()
        config = {
            "endpoint": self.server.endpoint,
            "queue": queue,
            "instance": INSTANCE,
            "chromium": CHROMIUM,
            "modules": modules,
            "artifacts": ARTIFACTS,
            "admin": {"id": admin_id, "secret": admin_secret},
            "alice": self.make_user("alice", member_policy("team-a")),
            "bob": self.make_user("bob", member_policy("team-b")),
        }
        shutil.rmtree(ARTIFACTS, ignore_errors=True)
        os.makedirs(ARTIFACTS, exist_ok=True)
        proc = subprocess.run(["node", os.path.join(HERE, "dashboard.mjs")],
                              env=dict(os.environ, ALLOT_UI_TEST=json.dumps(config)),
                              capture_output=True, text=True, timeout=400)
        sys.stderr.write(proc.stdout + proc.stderr)
        self.assertEqual(proc.returncode, 0, "dashboard.mjs failed (its output is above)")
        for shot in ("dashboard.png", "1-overview-borrowing.png", "3-job-preempted.png", "4-overview-reclaimed.png",
                     "5-member-denied.png"):
            self.assertTrue(os.path.getsize(os.path.join(ARTIFACTS, shot)) > 10000, shot)


if __name__ == "__main__":
    unittest.main()
