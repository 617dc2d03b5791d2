// The Allot dashboard: sign-in, then the queue's shares, their use over time, the jobs, one
// job's attempts, explanation, logs and audit, and a what-if for a new job. Views are chosen by
// the address's hash (#/overview, #/usage, #/jobs, #/job/<id>, #/whatif).
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Api, ApiError, loadSession, saveSession } from './api.js';
import { usePoll } from './util.js';
import { Problem } from './common.jsx';
import { Overview } from './overview.jsx';
import { Usage } from './usage.jsx';
import { Jobs } from './jobs.jsx';
import { JobDetail } from './job.jsx';
import { WhatIf } from './whatif.jsx';

function useHash() {
  const [hash, setHash] = useState(location.hash || '#/overview');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/overview');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function SignIn({ onSignedIn, notice }) {
  const [keyId, setKeyId] = useState('');
  const [secret, setSecret] = useState('');
  const [region, setRegion] = useState('local');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const session = { accessKeyId: keyId.trim(), secretAccessKey: secret.trim(), region: region.trim() || 'local' };
    try {
      // A call every policy in docs/policies allows: it proves the key and the region.
      await new Api(session, { notifyRefusal: false }).call('DescribeJobQueues', {});
      saveSession(session);
      onSignedIn(session);
    } catch (err) {
      // A 403 here is a valid key whose policy cannot list queues: still signed in.
      if (err instanceof ApiError && err.status === 403 && err.type === 'AccessDeniedException') {
        saveSession(session);
        onSignedIn(session);
      } else {
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="signin card" onSubmit={submit} data-testid="signin">
      <h1>Allot</h1>
      {notice && <p class="denied" data-testid="key-refused">The server no longer accepts this key ({notice}). Sign in again.</p>}
      <p>Sign in with an access key. The admin's is in <code>&lt;data-dir&gt;/credentials</code>;
        <code> allot users create NAME --policy FILE</code> makes others.</p>
      <label>Access key id<input name="accessKeyId" value={keyId} onInput={(e) => setKeyId(e.target.value)} autocomplete="username" required /></label>
      <label>Secret access key<input name="secretAccessKey" type="password" value={secret} onInput={(e) => setSecret(e.target.value)} autocomplete="current-password" required /></label>
      <label>Region<input name="region" value={region} onInput={(e) => setRegion(e.target.value)} /></label>
      <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      {error && <p class="error" data-testid="signin-error">{error.type ? `${error.type}: ` : ''}{error.message}</p>}
      <p class="hint">The keys stay in this tab (sessionStorage) and sign each request; they are never sent.</p>
    </form>
  );
}

function QueuePicker({ api, queue, setQueue }) {
  const queues = usePoll(() => api.call('DescribeJobQueues', {}), [api], 15000);
  const names = (queues.data?.jobQueues || []).map((q) => q.jobQueueName).sort();
  useEffect(() => {
    if (names.length && !names.includes(queue)) setQueue(names[0]);
  }, [names.join(','), queue]);
  if (queues.error) return <Problem error={queues.error} what="listing the job queues" />;
  return (
    <label class="queue">
      Queue{' '}
      <select data-testid="queue" value={queue} onChange={(e) => setQueue(e.target.value)}>
        {names.map((n) => <option value={n}>{n}</option>)}
      </select>
    </label>
  );
}

function App() {
  const [session, setSession] = useState(loadSession());
  const [expired, setExpired] = useState(null);
  useEffect(() => {
    const on = (e) => setExpired(e.detail);
    addEventListener('allot-key-refused', on);
    return () => removeEventListener('allot-key-refused', on);
  }, []);
  const [queue, setQueueState] = useState(sessionStorage.getItem('allot.queue') || '');
  const hash = useHash();
  const setQueue = (q) => {
    sessionStorage.setItem('allot.queue', q);
    setQueueState(q);
  };
  const [api, setApi] = useState(() => (session ? new Api(session) : null));
  if (!session || !api || expired) {
    return <SignIn notice={expired} onSignedIn={(s) => { setExpired(null); setSession(s); setApi(new Api(s)); }} />;
  }
  const signOut = () => {
    saveSession(null);
    sessionStorage.removeItem('allot.queue');
    setSession(null);
    setApi(null);
    location.hash = '#/overview';
  };
  const [where, search] = hash.slice(2).split('?');
  const [path, arg] = where.split('/');
  const params = new URLSearchParams(search || '');
  const views = [['overview', 'Queue'], ['usage', 'Utilization'], ['jobs', 'Jobs'], ['whatif', 'What if']];
  let body;
  if (path === 'job' && arg) body = <JobDetail api={api} jobId={decodeURIComponent(arg)} />;
  else if (!queue) body = <p>No job queue to show yet.</p>;
  else if (path === 'usage') body = <Usage api={api} queue={queue} />;
  else if (path === 'jobs') body = <Jobs key={search || ''} api={api} queue={queue} share={params.get('share') || ''} status={params.get('status') || ''} />;
  else if (path === 'whatif') body = <WhatIf api={api} queue={queue} />;
  else body = <Overview api={api} queue={queue} />;
  return (
    <div class="app">
      <header>
        <strong>Allot</strong>
        <nav>
          {views.map(([v, label]) => (
            <a href={`#/${v}`} class={path === v ? 'active' : ''} data-testid={`nav-${v}`}>{label}</a>
          ))}
        </nav>
        <QueuePicker api={api} queue={queue} setQueue={setQueue} />
        <span class="who" data-testid="who">{session.accessKeyId} · {session.region}</span>
        <button class="link" onClick={signOut} data-testid="signout">Sign out</button>
      </header>
      <main>{body}</main>
    </div>
  );
}

render(<App />, document.getElementById('app'));
