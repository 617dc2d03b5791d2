// Small pieces every view uses: an error in place of data, a denial said plainly.
export function Problem({ error, what }) {
  if (!error) return null;
  if (error.denied) {
    return (
      <p class="denied" data-testid="denied">
        Your access key's policy does not allow {what || 'this'}. ({error.message})
      </p>
    );
  }
  return (
    <p class="error" data-testid="error">
      {what ? `Could not load ${what}: ` : ''}
      {error.type ? `${error.type}: ` : ''}
      {error.message}
    </p>
  );
}

export function Section({ title, children, testid }) {
  return (
    <section class="card" data-testid={testid}>
      {title && <h2>{title}</h2>}
      {children}
    </section>
  );
}
