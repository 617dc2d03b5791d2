// What would the engine decide for a new job, now, on the live queue? POST /allot/v1/whatif with
// a SubmitServiceJob body: start, preempt (these victims) or wait (with the explanation). Nothing
// is submitted and nothing changes.
import { useState } from 'preact/hooks';
import { usePoll, fmtNumber, jobIdOf } from './util.js';
import { Problem, Section } from './common.jsx';
import { JobRef, Tree, Waiting } from './explain.jsx';

export function submitBody(queue, f) {
  const body = {
    jobName: f.name || 'what-if',
    jobQueue: queue,
    serviceJobType: 'SAGEMAKER_TRAINING',
    serviceRequestPayload: JSON.stringify({
      AlgorithmSpecification: { TrainingInputMode: 'File', ContainerEntrypoint: ['/bin/sh', '-c'], ContainerArguments: [f.script || 'true'] },
      RoleArn: 'arn:aws:iam::000000000000:role/allot-whatif',
      OutputDataConfig: { S3OutputPath: 's3://allot-whatif/output' },
      ResourceConfig: { InstanceType: f.instanceType, InstanceCount: Number(f.count) || 1, VolumeSizeInGB: 1 },
      StoppingCondition: { MaxRuntimeInSeconds: Number(f.maxRuntime) || 3600 },
    }),
  };
  if (f.share) body.quotaShareName = f.share;
  if (f.priority !== '') body.schedulingPriority = Number(f.priority);
  return body;
}

export function WhatIf({ api, queue }) {
  const shares = usePoll(() => api.call('ListQuotaShares', { jobQueue: queue, maxResults: 100 }), [api, queue], 0);
  const list = shares.data?.quotaShares || [];
  const [f, setF] = useState({ name: 'what-if', share: '', priority: '', instanceType: '', count: 1, maxRuntime: 3600, script: 'sleep 600' });
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const share = f.share || list[0]?.quotaShareName || '';
  const unit = f.instanceType || list.find((s) => s.quotaShareName === share)?.capacityLimits?.[0]?.capacityUnit || 'ml.g5.xlarge';
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const ask = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      setResult({ out: await api.post('/allot/v1/whatif', { submit: submitBody(queue, { ...f, share, instanceType: unit }) }) });
    } catch (error) {
      setResult({ error });
    } finally {
      setBusy(false);
    }
  };
  const out = result?.out;
  return (
    <Section title={`What if a job were submitted to ${queue} now?`} testid="whatif">
      <form class="grid" onSubmit={ask}>
        <label>Share<select value={share} onChange={set('share')} data-testid="whatif-share">
          {list.map((s) => <option value={s.quotaShareName}>{s.quotaShareName}</option>)}</select></label>
        <label>Name<input value={f.name} onInput={set('name')} /></label>
        <label>Priority<input type="number" value={f.priority} onInput={set('priority')} placeholder="none" data-testid="whatif-priority" /></label>
        <label>Instance type<input value={unit} onInput={set('instanceType')} /></label>
        <label>Instances<input type="number" min="1" value={f.count} onInput={set('count')} data-testid="whatif-count" /></label>
        <label>Max runtime (s)<input type="number" min="1" value={f.maxRuntime} onInput={set('maxRuntime')} /></label>
        <label class="wide">Command<input value={f.script} onInput={set('script')} /></label>
        <button type="submit" disabled={busy || (!shares.data && !shares.error)} data-testid="whatif-ask">{busy ? 'Asking…' : 'What would happen?'}</button>
      </form>
      {shares.error && <Problem error={shares.error} what="the shares" />}
      {result?.error && <Problem error={result.error} what="the what-if answer" />}
      {out && (
        <div data-testid="whatif-result" data-decision={out.decision}>
          <p class="summary"><b class={`decision d-${out.decision}`}>{out.decision}</b> {out.summary}</p>
          {(out.victims || []).length > 0 && (
            <table>
              <thead><tr><th>Victim</th><th>Share</th><th>Priority</th><th>Work lost (instance-s)</th><th>Rule</th></tr></thead>
              <tbody>{out.victims.map((v) => (
                <tr data-testid="whatif-victim"><td><JobRef id={v.jobId && jobIdOf(v.jobId)} name={v.jobName} /></td>
                  <td>{v.share || v.quotaShareName || ''}</td><td>{v.priority ?? ''}</td><td>{fmtNumber(v.workLostInstanceSeconds)}</td><td>{v.rule || ''}</td></tr>
              ))}</tbody>
            </table>
          )}
          {out.explanation && <Waiting w={out.explanation} />}
          {out.explanation && <details><summary>All the details</summary><Tree value={out.explanation} /></details>}
        </div>
      )}
    </Section>
  );
}
