import { useState, type FormEvent } from "react";
import { Link, useParams } from "react-router-dom";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schema } from "../api";
import { useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle } from "../components/ui";
import { useUsers } from "./Users";

type Role = Schema<"Role">;
const roles: Role[] = ["viewer", "editor", "admin"];

/** A workspace: its members with their roles; admins add, change and remove members. */
export function WorkspacePage() {
  const { slug = "" } = useParams();
  const { me } = useAuth();
  const qc = useQueryClient();
  const ws = useQuery({ queryKey: ["workspace", slug], queryFn: () => unwrap(api.GET("/api/workspaces/{workspaceSlug}", { params: { path: { workspaceSlug: slug } } })) });
  const members = useQuery({
    queryKey: ["members", slug],
    queryFn: () => unwrap(api.GET("/api/workspaces/{workspaceSlug}/members", { params: { path: { workspaceSlug: slug }, query: { limit: 200 } } })),
  });
  const manage = me.user.instanceRole === "admin" || ws.data?.role === "admin";
  const users = useUsers(me.user.instanceRole === "admin");
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [error, setError] = useState<unknown>(null);
  const act = async (p: Promise<unknown>) => {
    setError(null);
    try {
      await p;
      await qc.invalidateQueries({ queryKey: ["members", slug] });
    } catch (e) {
      setError(e);
    }
  };
  if (ws.isPending) return <Loading what="the workspace" />;
  if (ws.error) return <ErrorBox error={ws.error} title="Cannot load the workspace" />;
  const memberIds = new Set((members.data?.items ?? []).map((m) => m.user.id));
  const candidates = (users.data?.items ?? []).filter((u) => !memberIds.has(u.id));
  const add = (e: FormEvent) => {
    e.preventDefault();
    const id = userId || candidates[0]?.id;
    if (!id) return;
    void act(unwrap(api.POST("/api/workspaces/{workspaceSlug}/members", { params: { path: { workspaceSlug: slug } }, body: { userId: id, role } })));
    setUserId("");
  };
  return (
    <div>
      <p className="crumbs">
        <Link to="/">Projects</Link>
      </p>
      <PageTitle>{ws.data.name}</PageTitle>
      <p className="muted">
        Organisation {ws.data.org.name} · {ws.data.projectCount} projects · your role: {ws.data.role ?? "instance administrator"}
      </p>
      <h2>Members</h2>
      {members.isPending ? <Loading what="members" /> : null}
      <ErrorBox error={members.error ?? error} title="Members" />
      {members.data ? (
        <table>
          <caption className="sr-only">Members of {ws.data.name}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              {manage ? (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {members.data.items.map((m) => (
              <tr key={m.user.id}>
                <td>{m.user.displayName}</td>
                <td>{m.user.email}</td>
                <td>
                  {manage ? (
                    <select
                      aria-label={"Role of " + m.user.email}
                      value={m.role}
                      onChange={(e) =>
                        act(
                          unwrap(
                            api.PATCH("/api/workspaces/{workspaceSlug}/members/{userId}", {
                              params: { path: { workspaceSlug: slug, userId: m.user.id } },
                              body: { role: e.target.value as Role },
                            }),
                          ),
                        )
                      }
                    >
                      {roles.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                {manage ? (
                  <td>
                    <button
                      type="button"
                      aria-label={"Remove " + m.user.email}
                      onClick={() =>
                        act(unwrap(api.DELETE("/api/workspaces/{workspaceSlug}/members/{userId}", { params: { path: { workspaceSlug: slug, userId: m.user.id } } })))
                      }
                    >
                      Remove
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {manage && me.user.instanceRole === "admin" ? (
        <form onSubmit={add} aria-label="Add a member" className="inline-form">
          <h3>Add a member</h3>
          <Field label="User">
            <select value={userId || candidates[0]?.id || ""} onChange={(e) => setUserId(e.target.value)}>
              {candidates.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.displayName} ({u.email})
                </option>
              ))}
            </select>
          </Field>
          <Field label="Role">
            <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {roles.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={candidates.length === 0}>
            Add member
          </button>
        </form>
      ) : null}
    </div>
  );
}
