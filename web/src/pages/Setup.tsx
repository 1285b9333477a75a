import { useState, type FormEvent } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { api, setCsrfToken, unwrap } from "../api";
import { ErrorBox, Field, PageTitle } from "../components/ui";

/** First run: the server has no administrator yet; create one (and be signed in as it). */
export function SetupPage() {
  const qc = useQueryClient();
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await unwrap(api.POST("/api/auth/setup", { body: { email, displayName, password } }));
      setCsrfToken(me.csrfToken);
      qc.setQueryData(["me"], me);
      qc.setQueryData(["setup-status"], { setupRequired: false });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" className="narrow">
      <PageTitle>Set up sdods</PageTitle>
      <p>This server has no administrator yet. Create the first one; you are signed in as it.</p>
      <form onSubmit={submit} aria-label="Create the first administrator">
        <Field label="Email">
          <input type="email" required autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Display name">
          <input required maxLength={100} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </Field>
        <Field label="Password" hint="At least 12 characters.">
          <input type="password" required minLength={12} autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorBox error={error} title="Setup failed" />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Creating…" : "Create administrator"}
        </button>
      </form>
    </main>
  );
}
