// One job: its attempts on a timeline with each preemption's record, the explanation of why it
// waits or was preempted, the live tail of its logs and its audit entries. Each part asks the
// server on its own, so a policy that allows one and not another shows what it allows.
import { useEffect, useRef, useState } from 'preact/hooks';
import { usePoll, fmtTime, fmtDuration, fmtNumber, TERMINAL } from './util.js';
import { Problem, Section } from './common.jsx';
import { JobRef, Tree, Waiting } from './explain.jsx';

function hostsOf(job) {
  try {
    const p = JSON.parse(job.serviceRequestPayload || '{}');
    const n = Number(p?.ResourceConfig?.InstanceCount || 1);
    return Array.from({ length: Math.max(1, Math.min(n, 64)) }, (_, i) => `algo-${i + 1}`);
  } catch {
    return ['algo-1'];
  }
}

// The attempts with what ended each: its preemption record, if it was preempted.
export function attemptsOf(job) {
  const records = job.allot?.preemptionRecords || [];
  return (job.attempts || []).map((a, i) => {
    const n = i + 1;
    const preemption = records.find((r) => r.attempt === n) || null;
    return { n, startedAt: a.startedAt, stoppedAt: a.stoppedAt, statusReason: a.statusReason || '', preemption };
  });
}

function Timeline({ job, attempts, now }) {
  const t0 = job.createdAt;
  const ends = attempts.map((a) => a.stoppedAt || now);
  const t1 = Math.max(t0 + 1000, job.stoppedAt || 0, ...ends, TERMINAL.has(job.status) ? 0 : now);
  const x = (t) => (100 * (t - t0)) / (t1 - t0);
  // Waiting: from submission to the first start, between attempts, and after the last while the
  // job is runnable again.
  const waits = [];
  let from = t0;
  for (const a of attempts) {
    if (a.startedAt > from) waits.push([from, a.startedAt]);
    from = a.stoppedAt || Infinity;
  }
  if (from !== Infinity && !TERMINAL.has(job.status)) waits.push([from, now]);
  const rowH = 22;
  const height = (attempts.length + 1) * rowH + 18;
  return (
    <div class="timeline" data-testid="timeline">
      <svg viewBox={`0 0 100 ${height}`} preserveAspectRatio="none" width="100%" height={height}>
        {waits.map(([from, to]) => <rect x={x(from)} y="2" width={Math.max(0.3, x(to) - x(from))} height={rowH - 8} class="tl-wait" />)}
        {attempts.map((a, i) => {
          const y = (i + 1) * rowH + 2;
          const kind = a.preemption ? 'preempted' : a.stoppedAt ? (job.status === 'FAILED' && i === attempts.length - 1 ? 'failed' : 'ended') : 'running';
          const rec = a.preemption;
          return (
            <g>
              <rect x={x(a.startedAt)} y={y} width={Math.max(0.3, x(a.stoppedAt || now) - x(a.startedAt))} height={rowH - 8} class={`tl-${kind}`} />
              {rec?.at ? <rect x={x(rec.at)} y={y - 3} width="0.4" height={rowH - 2} class="tl-mark" /> : null}
            </g>
          );
        })}
      </svg>
      <div class="tl-axis muted small"><span>{fmtTime(t0)} submitted</span><span>{fmtTime(t1)}</span></div>
      <div class="legend"><span class="seg tl-key-wait" /> waiting <span class="seg tl-key-running" /> running
        <span class="seg tl-key-ended" /> ended <span class="seg tl-key-preempted" /> preempted <span class="seg tl-key-mark" /> chosen as a victim</div>
    </div>
  );
}

function AttemptList({ attempts, now }) {
  return (
    <ol class="attempts" data-testid="attempts">
      {attempts.map((a) => (
        <li data-testid="attempt" data-attempt={a.n} data-preempted={a.preemption ? 'yes' : 'no'}>
          <b>Attempt {a.n}</b>: {fmtTime(a.startedAt)} → {a.stoppedAt ? fmtTime(a.stoppedAt) : 'running'}
          {' '}({fmtDuration((a.stoppedAt || now) - a.startedAt)}){a.statusReason ? ` · ${a.statusReason}` : ''}
          {a.preemption && (
            <dl class="record" data-testid="preemption-record">
              <dt>Preempted by</dt><dd data-testid="preemptor"><JobRef id={a.preemption.preemptor} name={a.preemption.preemptorName} share={a.preemption.preemptorShare} /></dd>
              <dt>Rule</dt><dd data-testid="rule">{a.preemption.rule}</dd>
              <dt>Chosen</dt><dd>{fmtTime(a.preemption.at)}</dd>
              <dt>Victim key</dt>
              <dd data-testid="victim-key">
                priority {a.preemption.victimKey?.priority}, work lost if chosen {fmtNumber(a.preemption.victimKey?.workLostInstanceSeconds)} instance-s,
                attempt started {fmtTime(a.preemption.victimKey?.attemptStartedAt)}
              </dd>
              <dt>Work lost</dt>
              <dd data-testid="work-lost">{a.preemption.workLostInstanceSeconds == null ? 'not yet known' : `${fmtNumber(a.preemption.workLostInstanceSeconds)} instance-seconds`}</dd>
              {a.preemption.runnerUp && [<dt>Runner-up</dt>, <dd data-testid="runner-up">
                <JobRef id={a.preemption.runnerUp.jobId} name={a.preemption.runnerUp.jobName} share={a.preemption.runnerUp.share} />
                {' '}({a.preemption.runnerUp.rule}, priority {a.preemption.runnerUp.victimKey?.priority}, work lost if chosen {fmtNumber(a.preemption.runnerUp.victimKey?.workLostInstanceSeconds)} instance-s)</dd>]}
            </dl>
          )}
        </li>
      ))}
    </ol>
  );
}

// The preemptions this job's start made: whom each stopped.
function Made({ made }) {
  if (!made?.length) return null;
  return (
    <div data-testid="preemptions-made">
      <h3>Preemptions this job made</h3>
      <ul>{made.map((m) => (
        <li>{fmtTime(m.at)}: {m.victims.map((v, i) => (
          <span>{i ? ', ' : ''}<JobRef id={v.jobId} name={v.jobName} share={v.share} /> attempt {v.attempt} ({v.rule}, {fmtNumber(v.workLostInstanceSeconds)} instance-s at risk)</span>
        ))}</li>
      ))}</ul>
    </div>
  );
}


function Explain({ api, job }) {
  const [state, setState] = useState({ open: false });
  const load = async () => {
    setState({ open: true, loading: true });
    try {
      const out = await api.get(`/allot/v1/jobs/${encodeURIComponent(job.jobId)}/explain`);
      setState({ open: true, out });
    } catch (error) {
      setState({ open: true, error });
    }
  };
  // Without the explain API: the engine's reason for a waiting job (allot.waitingReason), else the
  // job's own statusReason.
  const waiting = job.allot?.waitingReason;
  const fallback = (typeof waiting === 'string' ? waiting : waiting?.message) || job.statusReason || job.allot?.stopping?.reason || '';
  return (
    <Section title="Why" testid="explain">
      <button onClick={load} data-testid="explain-open">{state.open ? 'Explain again' : 'Explain'}</button>
      {state.loading && <p class="muted">asking the server…</p>}
      {state.out && (
        <div data-testid="explanation">
          <p class="summary" data-testid="explain-summary">{state.out.summary}</p>
          {state.out.waiting && <Waiting w={state.out.waiting} />}
          <details><summary>All the details</summary>
            {state.out.preempted && <><h3>Preempted</h3><Tree value={state.out.preempted} /></>}
            {state.out.waiting && <><h3>Waiting</h3><Tree value={state.out.waiting} /></>}
          </details>
        </div>
      )}
      {state.error && (state.error.missing || state.error.status === 0 ? (
        <div data-testid="explanation">
          <p class="muted small">The server has no explain API ({state.error.status} {state.error.type || ''}); from the job's own reason:</p>
          <p class="summary" data-testid="explain-summary">{fallback || `The job is ${job.status}.`}</p>
          {waiting && typeof waiting === 'object' && <Tree value={waiting} />}
        </div>
      ) : (
        <Problem error={state.error} what="the explanation" />
      ))}
    </Section>
  );
}

function Logs({ api, job }) {
  const hosts = hostsOf(job);
  const attempts = (job.attempts || []).length;
  const [sel, setSel] = useState({ attempt: attempts || 1, host: hosts[0], stream: 'stdout' });
  const [tail, setTail] = useState({ text: '', offset: 0, complete: false, error: null });
  const key = `${sel.attempt}/${sel.host}/${sel.stream}`;
  const box = useRef(null);
  useEffect(() => setSel((s) => ({ ...s, attempt: Math.max(1, attempts) })), [attempts]);
  useEffect(() => {
    let stopped = false;
    let timer = null;
    let offset = 0;
    let text = '';
    setTail({ text: '', offset: 0, complete: false, error: null });
    const step = async () => {
      try {
        const out = await api.get(`/allot/v1/jobs/${encodeURIComponent(job.jobId)}/logs`, { attempt: sel.attempt, host: sel.host, stream: sel.stream, offset });
        if (stopped) return;
        text = (text + (out.text || '')).slice(-200000);
        offset = out.nextOffset ?? offset;
        setTail({ text, offset, complete: !!out.complete, error: null });
        if (!out.complete) timer = setTimeout(step, out.text ? 300 : 2000);
      } catch (error) {
        if (stopped) return;
        setTail({ text, offset, complete: false, error });
        if (!error.denied) timer = setTimeout(step, 4000);
      }
    };
    if (attempts > 0) step();
    return () => { stopped = true; clearTimeout(timer); };
  }, [api, job.jobId, key, attempts > 0]);
  useEffect(() => { if (box.current) box.current.scrollTop = box.current.scrollHeight; }, [tail.text]);
  if (attempts === 0) return <Section title="Logs" testid="logs-section"><p class="muted">No attempt has started yet.</p></Section>;
  return (
    <Section title="Logs" testid="logs-section">
      <div class="toolbar">
        <label>Attempt <select value={sel.attempt} onChange={(e) => setSel({ ...sel, attempt: Number(e.target.value) })}>
          {Array.from({ length: attempts }, (_, i) => <option value={i + 1}>{i + 1}</option>)}</select></label>
        <label>Host <select value={sel.host} onChange={(e) => setSel({ ...sel, host: e.target.value })}>
          {hosts.map((h) => <option value={h}>{h}</option>)}</select></label>
        <label>Stream <select value={sel.stream} onChange={(e) => setSel({ ...sel, stream: e.target.value })}>
          <option value="stdout">stdout</option><option value="stderr">stderr</option></select></label>
        <span class="muted small">{tail.complete ? 'complete' : 'following…'} · {tail.offset} bytes</span>
      </div>
      {tail.error ? <Problem error={tail.error} what="this job's logs" /> : null}
      {!tail.error?.denied && <pre class="logs" ref={box} data-testid="logs">{tail.text}</pre>}
    </Section>
  );
}

function Audit({ api, job }) {
  const { data, error } = usePoll(() => api.get('/allot/v1/audit', { resource: job.jobArn, maxResults: 100 }), [api, job.jobArn], 5000);
  const records = data?.records || [];
  return (
    <Section title="Audit" testid="audit">
      <Problem error={error} what="the audit trail (allot:ReadAudit)" />
      {data && records.length === 0 && <p class="muted">No changes recorded.</p>}
      {records.length > 0 && (
        <table>
          <thead><tr><th>When</th><th>Who</th><th>Action</th><th>Outcome</th><th>Change</th></tr></thead>
          <tbody>
            {records.map((r) => (
              <tr data-testid="audit-row" data-action={r.action}>
                <td>{fmtTime(r.time)}</td><td>{r.userName || r.principal}</td><td>{r.action}</td><td>{r.outcome}</td>
                <td>{Object.entries(r.changes || {}).map(([f, c]) => <div data-testid="audit-change">{f}: {JSON.stringify(c.old)} → {JSON.stringify(c.new)}</div>)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

export function JobDetail({ api, jobId }) {
  const [now, setNow] = useState(Date.now());
  const { data: job, error } = usePoll(async () => {
    const j = await api.call('DescribeServiceJob', { jobId });
    setNow(Date.now());
    return j;
  }, [api, jobId], 2000);
  if (!job) return <Section title={`Job ${jobId}`} testid="job"><Problem error={error} what={`job ${jobId}`} />{!error && <p class="muted">loading…</p>}</Section>;
  const attempts = attemptsOf(job);
  return (
    <div data-testid="job" data-status={job.status}>
      <Section title={`Job ${job.jobName}`}>
        <Problem error={error} what="the job's latest state" />
        <dl class="facts">
          <dt>Id</dt><dd>{job.jobId}</dd>
          <dt>Status</dt><dd><span class={`status s-${job.status}`} data-testid="job-status">{job.status}</span>{job.allot?.stopping ? ` (stopping: ${job.allot.stopping.kind})` : ''}</dd>
          <dt>Reason</dt><dd data-testid="job-reason">{job.statusReason || ''}</dd>
          <dt>Share</dt><dd>{job.quotaShareName || ''}</dd>
          <dt>Priority</dt><dd>{job.schedulingPriority}</dd>
          <dt>Submitted</dt><dd>{fmtTime(job.createdAt)}{job.allot?.submittedBy ? ` by ${job.allot.submittedBy}` : ''}</dd>
          <dt>Preemptions</dt><dd data-testid="preemptions">{job.allot?.preemptions ?? job.preemptionSummary?.preemptedAttemptCount ?? 0}</dd>
        </dl>
      </Section>
      <Section title="Attempts">
        {attempts.length === 0 ? <p class="muted">No attempt yet.</p> : <Timeline job={job} attempts={attempts} now={now} />}
        <AttemptList attempts={attempts} now={now} />
        <Made made={job.allot?.preemptionsMade} />
      </Section>
      <Explain api={api} job={job} />
      <Logs api={api} job={job} />
      <Audit api={api} job={job} />
    </div>
  );
}
