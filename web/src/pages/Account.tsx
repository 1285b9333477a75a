import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schema } from "../api";
import { useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, formatTime } from "../components/ui";

type Scope = Schema<"Scope">;
const allScopes: Scope[] = [
  "runs:read", "runs:write", "runs:ingest", "features:read", "features:write", "projects:read", "projects:write", "stats:read",
  "schedules:read", "schedules:write", "agents:read", "agents:write", "artifacts:read", "tokens:read", "tokens:write",
  "admin:read", "admin:write", "account:read", "account:write", "mcp",
];

export function AccountPage() {
  return (
    <div>
      <PageTitle>Account</PageTitle>
      <Profile />
      <Password />
      <Sessions />
      <Tokens />
    </div>
  );
}

function Profile() {
  const { me, refresh } = useAuth();
  const [displayName, setDisplayName] = useState(me.user.displayName);
  const [email, setEmail] = useState(me.user.email);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState("");
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setDone("");
    try {
      await unwrap(api.PATCH("/api/me", { body: { displayName, email } }));
      await refresh();
      setDone("Saved.");
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} aria-labelledby="profile-h" className="inline-form">
      <h2 id="profile-h">Profile</h2>
      <Field label="Display name">
        <input required maxLength={100} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
      </Field>
      <Field label="Email">
        <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <ErrorBox error={error} title="Not saved" />
      <button type="submit">Save profile</button> <span role="status">{done}</span>
    </form>
  );
}

function Password() {
  const [currentPassword, setCurrent] = useState("");
  const [newPassword, setNew] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState("");
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setDone("");
    try {
      await unwrap(api.POST("/api/me/password", { body: { currentPassword, newPassword } }));
      setCurrent("");
      setNew("");
      setDone("Password changed.");
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} aria-labelledby="pw-h" className="inline-form">
      <h2 id="pw-h">Password</h2>
      <Field label="Current password">
        <input type="password" required autoComplete="current-password" value={currentPassword} onChange={(e) => setCurrent(e.target.value)} />
      </Field>
      <Field label="New password" hint="At least 12 characters.">
        <input type="password" required minLength={12} autoComplete="new-password" value={newPassword} onChange={(e) => setNew(e.target.value)} />
      </Field>
      <ErrorBox error={error} title="Password not changed" />
      <button type="submit">Change password</button> <span role="status">{done}</span>
    </form>
  );
}

function Sessions() {
  const qc = useQueryClient();
  const sessions = useQuery({ queryKey: ["sessions"], queryFn: () => unwrap(api.GET("/api/me/sessions", { params: { query: { limit: 200 } } })) });
  const [error, setError] = useState<unknown>(null);
  const act = async (p: Promise<unknown>) => {
    setError(null);
    try {
      await p;
      await qc.invalidateQueries({ queryKey: ["sessions"] });
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="sess-h">
      <h2 id="sess-h">Sessions</h2>
      {sessions.isPending ? <Loading what="sessions" /> : null}
      <ErrorBox error={sessions.error ?? error} title="Sessions" />
      {sessions.data ? (
        <table>
          <caption className="sr-only">Your sessions</caption>
          <thead>
            <tr>
              <th scope="col">Browser</th>
              <th scope="col">Address</th>
              <th scope="col">Last seen</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.data.items.map((s) => (
              <tr key={s.id}>
                <td>
                  {s.userAgent ?? "unknown"} {s.current ? <strong>(this one)</strong> : null}
                </td>
                <td>{s.clientAddress}</td>
                <td>{formatTime(s.lastSeenAt)}</td>
                <td>{formatTime(s.expiresAt)}</td>
                <td>
                  {s.current ? null : (
                    <button type="button" onClick={() => act(unwrap(api.DELETE("/api/me/sessions/{sessionId}", { params: { path: { sessionId: s.id } } })))}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <button type="button" onClick={() => act(unwrap(api.POST("/api/me/sessions/revoke-others")))}>
        Sign out every other session
      </button>
    </section>
  );
}

function Tokens() {
  const qc = useQueryClient();
  const tokens = useQuery({ queryKey: ["tokens"], queryFn: () => unwrap(api.GET("/api/tokens", { params: { query: { limit: 200 } } })) });
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(["runs:read"]));
  const [expires, setExpires] = useState("");
  const [created, setCreated] = useState<Schema<"CreatedApiToken"> | null>(null);
  const [copied, setCopied] = useState("");
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setCreated(null);
    setCopied("");
    try {
      const t = await unwrap(
        api.POST("/api/tokens", { body: { name, scopes: [...scopes], expiresAt: expires ? new Date(expires + "T23:59:59").toISOString() : undefined } }),
      );
      setCreated(t);
      setName("");
      await qc.invalidateQueries({ queryKey: ["tokens"] });
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (id: string) => {
    setError(null);
    try {
      await unwrap(api.DELETE("/api/tokens/{tokenId}", { params: { path: { tokenId: id } } }));
      await qc.invalidateQueries({ queryKey: ["tokens"] });
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="tok-h">
      <h2 id="tok-h">API tokens</h2>
      <p className="muted">Tokens let scripts and CI call the API as you, limited to their scopes.</p>
      {tokens.isPending ? <Loading what="tokens" /> : null}
      <ErrorBox error={tokens.error ?? error} title="Tokens" />
      {created ? (
        <div className="created-token" role="region" aria-label="New token">
          <p>
            <strong>Copy the token now: it is shown only this once.</strong>
          </p>
          <code data-testid="new-token">{created.token}</code>{" "}
          <button
            type="button"
            onClick={async () => {
              try {
                await navigator.clipboard.writeText(created.token);
                setCopied("Copied.");
              } catch {
                setCopied("Copying is not allowed here: select the token and copy it.");
              }
            }}
          >
            Copy token
          </button>{" "}
          <span role="status">{copied}</span>
        </div>
      ) : null}
      {tokens.data && tokens.data.items.length > 0 ? (
        <table>
          <caption className="sr-only">Your API tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scopes</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data.items.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td>
                <td>
                  <code>{t.prefix}</code>
                </td>
                <td>{t.scopes.join(", ")}</td>
                <td>{t.expiresAt ? formatTime(t.expiresAt) : "never"}</td>
                <td>{t.lastUsedAt ? formatTime(t.lastUsedAt) : "never"}</td>
                <td>
                  <button type="button" onClick={() => revoke(t.id)} aria-label={"Revoke token " + t.name}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : tokens.data ? (
        <p>No token yet.</p>
      ) : null}
      <form onSubmit={submit} aria-label="Create a token" className="inline-form">
        <h3>Create a token</h3>
        <Field label="Token name">
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <fieldset className="scopes">
          <legend>Scopes</legend>
          {allScopes.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                checked={scopes.has(s)}
                onChange={(e) => {
                  const n = new Set(scopes);
                  if (e.target.checked) n.add(s);
                  else n.delete(s);
                  setScopes(n);
                }}
              />{" "}
              {s}
            </label>
          ))}
        </fieldset>
        <Field label="Expires on" hint="Empty: never expires.">
          <input type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </Field>
        <button type="submit" disabled={scopes.size === 0}>
          Create token
        </button>
      </form>
    </section>
  );
}
