// The parts of an explanation the job page and the what-if share: a job named by another record,
// why a job waits (GET /allot/v1/jobs/{id}/explain's "waiting", the what-if's "explanation"),
// and any other detail as a tree.
import { fmtTime, fmtNumber } from './util.js';

// A job another record names: a link when the caller may see it, else only its share.
export function JobRef({ id, name, share }) {
  const shareText = share ? ` (share ${share})` : '';
  if (!id) return <span>{name || 'a job'}{shareText || ' the caller may not see'}</span>;
  return <span><a href={`#/job/${encodeURIComponent(id)}`}>{name || id}</a>{shareText}</span>;
}

// Keys that hold a time in epoch milliseconds.
const TIME_KEY = /(At|By|Bound)$|^at$/;

export function Tree({ value, name }) {
  if (value === null || value === undefined) return <span class="muted">none</span>;
  if (typeof value !== 'object') {
    return <span>{typeof value === 'number' && TIME_KEY.test(name || '') && value > 1e12 ? fmtTime(value) : String(value)}</span>;
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return (
    <dl class="tree">
      {entries.map(([k, v]) => [<dt>{k}</dt>, <dd><Tree value={v} name={String(k)} /></dd>])}
    </dl>
  );
}

// Why a job waits: the binding limit, how much is missing, who holds it, its place, its start.
export function Waiting({ w }) {
  const facts = [
    ['Binding limit', w.rule && `${w.rule}${w.unit ? ` on ${w.unit}` : ''}`],
    ['Needs', w.needed != null && `${fmtNumber(w.needed)} (${fmtNumber(w.available)} available, ${fmtNumber(w.missing)} missing)`],
    ['Position', w.positionInShare != null && `${w.positionInShare + 1} in its share, ${w.positionInQueue + 1} in the queue`],
    ['Starts', w.startBound ? `by ${fmtTime(w.startBound)} at the latest` : w.startUnknown || null],
    ['Would start with', w.wouldStart],
    ['In-share preemption', w.inSharePreemption],
  ].filter(([, v]) => v);
  return (
    <div data-testid="explain-waiting">
      <dl class="facts">{facts.map(([k, v]) => [<dt>{k}</dt>, <dd>{v}</dd>])}</dl>
      {(w.holders || []).length > 0 && (
        <table data-testid="holders">
          <thead><tr><th>Held by share</th><th>Holds</th><th>Borrowed</th><th>Jobs (ends by)</th></tr></thead>
          <tbody>{w.holders.map((h) => (
            <tr><td>{h.share}</td><td>{fmtNumber(h.held)}</td><td>{fmtNumber(h.borrowed)}</td>
              <td>{(h.jobs || []).map((j, i) => <span>{i ? ', ' : ''}<JobRef id={j.jobId} name={j.jobName} />{j.endsBy ? ` (${fmtTime(j.endsBy)})` : ''}</span>)}
                {h.moreJobs ? ` and ${h.moreJobs} more` : ''}{h.hiddenJobs ? ` (${h.hiddenJobs} you may not see)` : ''}</td></tr>
          ))}</tbody>
        </table>
      )}
    </div>
  );
}

