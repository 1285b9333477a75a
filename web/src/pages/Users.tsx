import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, formatTime } from "../components/ui";
import { OrgMembers } from "./Orgs";

export function useUsers(enabled = true) {
  return useQuery({ queryKey: ["users"], queryFn: () => unwrap(api.GET("/api/users", { params: { query: { limit: 200 } } })), enabled });
}

/** Instance users, for instance administrators: list, create, disable, make admin. */
export function UsersPage() {
  const { me } = useAuth();
  const qc = useQueryClient();
  const users = useUsers(me.user.instanceRole === "admin");
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [admin, setAdmin] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (me.user.instanceRole !== "admin") return <p>Only instance administrators manage users.</p>;
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await unwrap(api.POST("/api/users", { body: { email, displayName, password, instanceRole: admin ? "admin" : "user" } }));
      setEmail("");
      setDisplayName("");
      setPassword("");
      await qc.invalidateQueries({ queryKey: ["users"] });
    } catch (err) {
      setError(err);
    }
  };
  const update = async (userId: string, body: { disabled?: boolean; instanceRole?: "user" | "admin" }) => {
    setError(null);
    try {
      await unwrap(api.PATCH("/api/users/{userId}", { params: { path: { userId } }, body }));
      await qc.invalidateQueries({ queryKey: ["users"] });
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div>
      <PageTitle>Users</PageTitle>
      {users.isPending ? <Loading what="users" /> : null}
      <ErrorBox error={users.error ?? error} title="Users" />
      {users.data ? (
        <table>
          <caption className="sr-only">Users of this server</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.data.items.map((u) => (
              <tr key={u.id}>
                <td>
                  {u.displayName} {u.disabled ? <em>(disabled)</em> : null}
                </td>
                <td>{u.email}</td>
                <td>{u.instanceRole}</td>
                <td>{u.lastLoginAt ? formatTime(u.lastLoginAt) : "never"}</td>
                <td>
                  {u.id !== me.user.id ? (
                    <>
                      <button type="button" onClick={() => update(u.id, { disabled: !u.disabled })} aria-label={(u.disabled ? "Enable " : "Disable ") + u.email}>
                        {u.disabled ? "Enable" : "Disable"}
                      </button>{" "}
                      <button
                        type="button"
                        onClick={() => update(u.id, { instanceRole: u.instanceRole === "admin" ? "user" : "admin" })}
                        aria-label={(u.instanceRole === "admin" ? "Remove admin from " : "Make admin ") + u.email}
                      >
                        {u.instanceRole === "admin" ? "Remove admin" : "Make admin"}
                      </button>
                    </>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form onSubmit={create} aria-label="Create a user" className="inline-form">
        <h2>Create a user</h2>
        <Field label="Email">
          <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
        </Field>
        <Field label="Display name">
          <input required maxLength={100} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </Field>
        <Field label="Initial password" hint="At least 12 characters; tell it to the user.">
          <input type="password" required minLength={12} value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
        </Field>
        <label>
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} /> Instance administrator
        </label>
        <div>
          <button type="submit">Create user</button>
        </div>
      </form>
      <OrgMembers />
    </div>
  );
}
