// Drives the dashboard in Debian's chromium (headless, playwright-core) through issue 12's story;
// started by test_dashboard.py, which starts the server and passes ALLOT_UI_TEST (JSON: endpoint,
// queue, keys of admin, alice (team-a) and bob (team-b), chromium, node_modules, artifacts).
// Jobs are submitted with signed calls (aws4fetch, the dashboard's own signer); everything
// checked is read off the page. Exits non-zero with the reason on the first failed check.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const cfg = JSON.parse(process.env.ALLOT_UI_TEST);
const require = createRequire(join(cfg.modules, 'noop.js'));
const { chromium } = require('playwright-core');
const { AwsClient } = require('aws4fetch');

const log = (...a) => console.log(new Date().toISOString().slice(11, 23), ...a);
function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
  log('ok:', what);
}

// Whether the server has a route (another part of issue 12 may not have landed): not a 404.
async function answers(method, path, body) {
  const aws = new AwsClient({ accessKeyId: cfg.admin.id, secretAccessKey: cfg.admin.secret, service: 'batch', region: 'local' });
  const init = { method, headers: { 'content-type': 'application/json' } };
  if (body) init.body = JSON.stringify(body);
  const res = await aws.fetch(`${cfg.endpoint}${path}`, init);
  await res.text();
  return res.status !== 404;
}

async function call(who, action, body) {
  const aws = new AwsClient({ accessKeyId: cfg[who].id, secretAccessKey: cfg[who].secret, service: 'batch', region: 'local' });
  const res = await aws.fetch(`${cfg.endpoint}/v1/${action}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const out = await res.json();
  if (!res.ok) throw new Error(`${who} ${action}: ${res.status} ${JSON.stringify(out)}`);
  return out;
}

function payload(script) {
  return JSON.stringify({
    AlgorithmSpecification: { TrainingInputMode: 'File', ContainerEntrypoint: ['/bin/sh', '-c'], ContainerArguments: [script] },
    RoleArn: 'arn:aws:iam::000000000000:role/allot-test',
    OutputDataConfig: { S3OutputPath: 's3://allot-test/output' },
    ResourceConfig: { InstanceType: cfg.instance, InstanceCount: 1, VolumeSizeInGB: 1 },
    StoppingCondition: { MaxRuntimeInSeconds: 3600 },
  });
}

// Prints a line, then sleeps until stopped; exits 143 at SIGTERM.
const sleeper = (line) => `echo '${line}'; trap 'exit 143' TERM; sleep 120 & wait`;

async function submit(who, share, name, priority, line) {
  const out = await call(who, 'submitservicejob', {
    jobName: name, jobQueue: cfg.queue, serviceJobType: 'SAGEMAKER_TRAINING', quotaShareName: share,
    schedulingPriority: priority, serviceRequestPayload: payload(sleeper(line)),
  });
  log(`${who} submitted ${name} (${out.jobId}) to ${share} at priority ${priority}`);
  return out.jobId;
}

async function waitStatus(jobId, status, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await call('admin', 'describeservicejob', { jobId });
    if (last.status === status) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${jobId} not ${status} within ${timeoutMs} ms: ${last?.status} (${last?.statusReason})`);
}

const bar = (page, share) => page.locator(`[data-testid=share-bar][data-share="${share}"]`);
async function waitBar(page, share, want, what) {
  const loc = bar(page, share);
  const attrs = Object.keys(want);
  const deadline = Date.now() + 20000;
  let got;
  while (Date.now() < deadline) {
    got = {};
    if (await loc.count()) for (const a of attrs) got[a] = await loc.getAttribute(`data-${a}`);
    if (attrs.every((a) => got[a] === String(want[a]))) return check(true, `${what}: ${share} ${JSON.stringify(want)}`);
    await page.waitForTimeout(250);
  }
  throw new Error(`${what}: bar of ${share} shows ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
}

async function signIn(page, who) {
  await page.goto(`${cfg.endpoint}/ui/`);
  await page.fill('input[name=accessKeyId]', cfg[who].id);
  await page.fill('input[name=secretAccessKey]', cfg[who].secret);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=who]');
  check((await page.textContent('[data-testid=who]')).includes(cfg[who].id), `${who} is signed in`);
}

// The jobs view, unfiltered. The hash change re-renders the page a moment after the click:
// filling the form before that fills the view about to go (a CI run failed so, from the team-a
// view that a share's link opens).
async function openJobs(page) {
  await page.click('[data-testid=nav-jobs]');
  await page.waitForFunction(() => location.hash === '#/jobs' && document.querySelector('[data-testid=filter-share]')?.value === '');
}
const shot = (page, name) => page.screenshot({ path: join(cfg.artifacts, name), fullPage: true });

const browser = await chromium.launch({
  executablePath: cfg.chromium,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const problems = [];
let failed = false;
try {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(cfg.endpoint)) problems.push(`request to another origin: ${r.url()}`);
  });

  // The admin signs in (a wrong secret first: refused with the server's reason).
  await page.goto(`${cfg.endpoint}/ui/`);
  await page.fill('input[name=accessKeyId]', cfg.admin.id);
  await page.fill('input[name=secretAccessKey]', 'not-the-secret');
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=signin-error]');
  check(/signature/i.test(await page.textContent('[data-testid=signin-error]')), 'a wrong secret is refused');
  await signIn(page, 'admin');
  await page.waitForSelector('[data-testid=share-bar][data-share="team-b"]');
  await waitBar(page, 'team-a', { used: 0, borrowed: 0, lent: 0, limit: 1 }, 'an idle queue');

  // team-a runs one job in its own instance and borrows team-b's idle one for a second.
  const own = await submit('alice', 'team-a', 'a-own', 5, 'hello from a-own');
  await waitStatus(own, 'RUNNING');
  const borrower = await submit('alice', 'team-a', 'a-borrower', 1, 'hello from a-borrower');
  await waitStatus(borrower, 'RUNNING');
  await waitBar(page, 'team-a', { used: 2, own: 1, borrowed: 1, waiting: 0 }, 'team-a borrows');
  await waitBar(page, 'team-b', { used: 0, lent: 1 }, 'team-b lends');
  await shot(page, '1-overview-borrowing.png');
  // The README's picture (docs/images/dashboard.png is a copy): the header and the bars.
  const card = await page.locator('[data-testid=overview]').boundingBox();
  await page.screenshot({ path: join(cfg.artifacts, 'dashboard.png'), clip: { x: 0, y: 0, width: 1200, height: Math.ceil(card.y + card.height + 16) } });

  // The borrowing job's page: one attempt, running, its log line in the tail.
  await page.goto(`${cfg.endpoint}/ui/#/job/${borrower}`);
  await page.waitForSelector('[data-testid=attempt][data-attempt="1"]');
  await page.waitForFunction(() => document.querySelector('[data-testid=logs]')?.textContent.includes('hello from a-borrower'), null, { timeout: 20000 });
  check(true, 'the log tail shows the running attempt\'s output');
  check(await page.locator('[data-testid=attempt][data-preempted=yes]').count() === 0, 'no preemption yet');
  await shot(page, '2-job-running.png');

  // team-b claims its instance back: the borrowing job is preempted (the page is watching).
  const claimer = await submit('bob', 'team-b', 'b-claims', 1, 'hello from b-claims');
  await page.waitForSelector('[data-testid=attempt][data-preempted=yes]', { timeout: 30000 });
  const record = page.locator('[data-testid=preemption-record]').first();
  check(/cross|reclaim/i.test(await record.locator('[data-testid=rule]').textContent()), 'the record names the reclaim rule');
  check((await record.locator('[data-testid=preemptor]').textContent()).length > 0, 'the record names the preemptor');
  check(/priority 1/.test(await record.locator('[data-testid=victim-key]').textContent()), 'the record shows the victim key');
  await waitStatus(borrower, 'RUNNABLE', 20000);
  await waitStatus(claimer, 'RUNNING', 20000);
  await page.waitForSelector('[data-testid=job][data-status=RUNNABLE]', { timeout: 10000 });
  await page.waitForFunction(() => /instance-seconds/.test(document.querySelector('[data-testid=work-lost]')?.textContent || ''), null, { timeout: 10000 });
  check(true, 'the timeline shows the preempted attempt with its work lost');

  // A priority change by alice shows in the job's audit: who, old and new.
  await call('alice', 'updateservicejob', { jobId: borrower, schedulingPriority: 3 });
  await page.waitForSelector('[data-testid=audit-change]', { timeout: 15000 });
  const change = await page.textContent('[data-testid=audit-row][data-action="batch:UpdateServiceJob"]');
  check(/alice/.test(change) && /1 → 3/.test(change), `the audit shows alice's priority change (${change.trim()})`);

  // Why is it waiting?
  await page.click('[data-testid=explain-open]');
  await page.waitForSelector('[data-testid=explain-summary]');
  const why = (await page.textContent('[data-testid=explain-summary]')).trim();
  check(why.length > 10, `the explanation reads: ${why}`);
  await shot(page, '3-job-preempted.png');

  // The bars have followed: team-a holds its own instance and waits, team-b uses its own.
  await page.click('[data-testid=nav-overview]');
  await waitBar(page, 'team-a', { used: 1, own: 1, borrowed: 0, waiting: 1 }, 'team-a after the reclaim');
  await waitBar(page, 'team-b', { used: 1, own: 1, lent: 0 }, 'team-b after the reclaim');
  await shot(page, '4-overview-reclaimed.png');
  // A share's name leads to its waiting jobs.
  await page.click('[data-testid=share-bar][data-share="team-a"] a');
  await page.waitForFunction((id) => {
    const rows = [...document.querySelectorAll('[data-testid=job-row]')];
    return rows.length === 1 && rows[0].dataset.job === id;
  }, borrower);
  check(true, "team-a's name in the overview opens its waiting jobs");

  // The other views answer: the jobs table (paged, filtered), the history, the what-if form.
  await openJobs(page);
  await page.selectOption('[data-testid=filter-status]', 'ANY');
  await page.click('[data-testid=filter-apply]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=job-row]').length === 3);
  await page.selectOption('[data-testid=filter-share]', 'team-a');
  await page.selectOption('[data-testid=filter-status]', 'RUNNABLE');
  await page.click('[data-testid=filter-apply]');
  await page.waitForFunction((id) => {
    const rows = [...document.querySelectorAll('[data-testid=job-row]')];
    return rows.length === 1 && rows[0].dataset.job === id;
  }, borrower);
  check(true, 'the jobs table filters by share and status');
  // 60 more jobs: the table shows them 50 at a time, Next and Previous walk the pages.
  for (let i = 0; i < 60; i++) {
    await call('admin', 'submitservicejob', {
      jobName: `bulk-${String(i).padStart(2, '0')}`, jobQueue: cfg.queue, serviceJobType: 'SAGEMAKER_TRAINING',
      quotaShareName: 'team-a', serviceRequestPayload: payload('true'),
    });
  }
  await page.selectOption('[data-testid=filter-share]', '');
  await page.selectOption('[data-testid=filter-status]', 'ANY');
  await page.fill('[data-testid=filter-name]', 'bulk-*');
  await page.click('[data-testid=filter-apply]');
  const rows = () => page.locator('[data-testid=job-row]').count();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=job-row]').length === 50);
  check(await page.textContent('[data-testid=job-row] >> nth=0 >> a') === 'bulk-59', 'page 1 starts with the newest job');
  await page.click('[data-testid=page-next]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=job-row]').length === 10);
  check(await page.textContent('[data-testid=job-row] >> nth=9 >> a') === 'bulk-00', 'page 2 ends with the oldest job');
  check(await page.locator('[data-testid=page-next]').isDisabled(), 'no page after the last');
  await page.click('[data-testid=page-prev]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=job-row]').length === 50);
  check((await rows()) === 50, 'Previous goes back to page 1');
  await page.click('[data-testid=nav-usage]');
  const until = Date.now();
  if (await answers('GET', `/allot/v1/history/usage?queue=${cfg.queue}&since=${until - 3600e3}&until=${until}`)) {
    // Sampled every second (test_dashboard.py): the last hour's chart of each share has points.
    await page.click('[data-testid=range-1h]');
    await page.waitForSelector('[data-testid=usage-share][data-share="team-a"] canvas', { timeout: 20000 });
    await page.waitForSelector('[data-testid=usage-share][data-share="team-b"] canvas');
    check(true, 'the utilization view charts each share');
  } else {
    await page.waitForSelector('[data-testid=no-history]');
    check(true, 'the utilization view says "no history yet" (this server keeps none)');
  }
  await shot(page, '6-usage.png');
  await page.click('[data-testid=nav-whatif]');
  await page.waitForSelector('[data-testid=whatif-ask]:not([disabled])');
  await page.fill('[data-testid=whatif-priority]', '9');
  await page.click('[data-testid=whatif-ask]');
  if (await answers('POST', '/allot/v1/whatif', { submit: {} })) {
    // team-a holds its limit with a-own and in-share preemption is off: a new team-a job waits.
    await page.waitForSelector('[data-testid=whatif-result]');
    const decision = await page.getAttribute('[data-testid=whatif-result]', 'data-decision');
    check(decision === 'wait', `the what-if answers ${decision}: ${(await page.textContent('[data-testid=whatif-result] .summary')).slice(0, 160)}`);
  } else {
    await page.waitForSelector('[data-testid=whatif] .error');
    check(true, 'the what-if form shows the server\'s error plainly (no what-if API here)');
  }
  await shot(page, '7-whatif.png');

  // bob (a team-b member) signs in: team-a's job and its logs stay hidden, his own are shown.
  await page.click('[data-testid=signout]');
  await page.waitForSelector('[data-testid=signin]');
  await signIn(page, 'bob');
  await page.goto(`${cfg.endpoint}/ui/#/job/${borrower}`);
  await page.waitForSelector('[data-testid=denied]');
  check(await page.locator('[data-testid=logs]').count() === 0, "bob sees no log of team-a's job");
  check(!(await page.content()).includes('hello from a-borrower'), "no trace of team-a's output on bob's page");
  await shot(page, '5-member-denied.png');
  await openJobs(page);
  await page.selectOption('[data-testid=filter-status]', 'ANY');
  await page.click('[data-testid=filter-apply]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=job-row]').length === 1);
  check(await page.locator('[data-testid=job-row][data-share="team-a"]').count() === 0, "bob's job list holds no team-a job");
  await page.goto(`${cfg.endpoint}/ui/#/job/${claimer}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=logs]')?.textContent.includes('hello from b-claims'), null, { timeout: 20000 });
  check(true, 'bob reads his own job\'s logs');

  // The admin rotates bob's key while he watches: the page asks him to sign in again.
  const aws = new AwsClient({ accessKeyId: cfg.admin.id, secretAccessKey: cfg.admin.secret, service: 'batch', region: 'local' });
  const rotated = await aws.fetch(`${cfg.endpoint}/allot/v1/users/bob/keys/rotate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  check(rotated.status === 200, `bob's key is rotated (${rotated.status})`);
  await page.waitForSelector('[data-testid=key-refused]', { timeout: 15000 });
  check(await page.locator('[data-testid=signin]').count() === 1, 'a refused key leads back to the sign-in form');

  check(problems.length === 0, `no CSP violation, page error or other origin (${problems.join('; ')})`);
} catch (e) {
  failed = true;
  console.error(e.stack || String(e));
  try {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages[0]) await pages[0].screenshot({ path: join(cfg.artifacts, 'failure.png'), fullPage: true });
  } catch {}
  if (problems.length) console.error('browser problems:', problems.join('\n'));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
