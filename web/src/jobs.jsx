// The queue's jobs, newest first, one page at a time (ListServiceJobs with maxResults and
// nextToken): a million jobs cost one page. ListServiceJobs takes one filter at a time, so:
//   name   -> the JOB_NAME filter (a trailing * is a prefix); status and share then filter the page
//   share  -> QUOTA_SHARE_NAME with jobStatus
//   status -> jobStatus; "any" -> AFTER_CREATED_AT 0 (every status), the share filtering the page
import { useState } from 'preact/hooks';
import { usePoll, fmtTime, STATUSES } from './util.js';
import { Problem, Section } from './common.jsx';

const PAGE = 50;

export function listRequest(queue, { name, share, status }, token) {
  const body = { jobQueue: queue, maxResults: PAGE };
  if (token) body.nextToken = token;
  let local = null; // what the page must still be filtered by
  if (name) {
    body.filters = [{ name: 'JOB_NAME', values: [name] }];
    local = { share, status: status === 'ANY' ? '' : status };
  } else if (status === 'ANY') {
    body.filters = [{ name: 'AFTER_CREATED_AT', values: ['0'] }];
    local = { share, status: '' };
  } else {
    body.jobStatus = status;
    if (share) body.filters = [{ name: 'QUOTA_SHARE_NAME', values: [share] }];
  }
  return { body, local };
}

export function Jobs({ api, queue, share = '', status = '' }) {
  const [draft, setDraft] = useState({ name: '', share, status: status || 'RUNNING' });
  const [filter, setFilter] = useState(draft);
  const [tokens, setTokens] = useState([null]); // the token of each page shown so far
  const page = tokens.length - 1;
  const shares = usePoll(() => api.call('ListQuotaShares', { jobQueue: queue, maxResults: 100 }), [api, queue], 0);
  const { data, error, loading } = usePoll(async () => {
    const { body, local } = listRequest(queue, filter, tokens[page]);
    const out = await api.call('ListServiceJobs', body);
    let jobs = out.jobSummaryList || [];
    if (local) {
      jobs = jobs.filter((j) => (!local.share || j.quotaShareName === local.share) && (!local.status || j.status === local.status));
    }
    return { jobs, nextToken: out.nextToken, filtered: !!local };
  }, [api, queue, filter, page], 5000);
  const apply = (e) => {
    e.preventDefault();
    setFilter({ ...draft, name: draft.name.trim() });
    setTokens([null]);
  };
  const shareNames = (shares.data?.quotaShares || []).map((s) => s.quotaShareName).sort();
  return (
    <Section title={`Jobs of ${queue}`} testid="jobs">
      <form class="toolbar" onSubmit={apply}>
        <label>Share{' '}
          <select data-testid="filter-share" value={draft.share} onChange={(e) => setDraft({ ...draft, share: e.target.value })}>
            <option value="">any</option>
            {shareNames.map((s) => <option value={s}>{s}</option>)}
          </select>
        </label>
        <label>Status{' '}
          <select data-testid="filter-status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.target.value })}>
            <option value="ANY">any</option>
            {STATUSES.map((s) => <option value={s}>{s}</option>)}
          </select>
        </label>
        <label>Name{' '}
          <input data-testid="filter-name" placeholder="name or prefix*" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.target.value })} />
        </label>
        <button type="submit" data-testid="filter-apply">Apply</button>
      </form>
      <Problem error={error} what="the jobs" />
      {data?.filtered && <p class="muted small">Share and status filter each page here (the server takes one filter at a time): a page may hold fewer than {PAGE}.</p>}
      <table class="jobs" data-testid="jobs-table">
        <thead><tr><th>Name</th><th>Share</th><th>Status</th><th>Created</th><th>Started</th><th>Reason</th></tr></thead>
        <tbody>
          {(data?.jobs || []).map((j) => (
            <tr data-testid="job-row" data-job={j.jobId} data-share={j.quotaShareName || ''} data-status={j.status}>
              <td><a href={`#/job/${encodeURIComponent(j.jobId)}`}>{j.jobName}</a></td>
              <td>{j.quotaShareName || ''}</td>
              <td><span class={`status s-${j.status}`}>{j.status}</span></td>
              <td>{fmtTime(j.createdAt)}</td>
              <td>{fmtTime(j.startedAt)}</td>
              <td class="reason">{j.statusReason || ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data && data.jobs.length === 0 && <p class="muted" data-testid="no-jobs">No jobs on this page.</p>}
      <div class="toolbar">
        <button disabled={page === 0} onClick={() => setTokens(tokens.slice(0, -1))} data-testid="page-prev">Previous</button>
        <span>page {page + 1}{loading ? ' …' : ''}</span>
        <button disabled={!data?.nextToken} onClick={() => setTokens([...tokens, data.nextToken])} data-testid="page-next">Next</button>
      </div>
    </Section>
  );
}
