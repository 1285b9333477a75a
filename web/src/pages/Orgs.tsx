import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Field, Loading } from "../components/ui";
import { useUsers } from "./Users";

/** Organisations and their members (member or admin), for instance administrators. */
export function OrgMembers() {
  const orgs = useQuery({ queryKey: ["orgs"], queryFn: () => unwrap(api.GET("/api/orgs", { params: { query: { limit: 200 } } })) });
  if (orgs.isPending) return <Loading what="organisations" />;
  if (orgs.error) return <ErrorBox error={orgs.error} title="Cannot list organisations" />;
  return (
    <section aria-labelledby="orgs-h">
      <h2 id="orgs-h">Organisations</h2>
      {orgs.data.items.map((o) => (
        <Org key={o.slug} slug={o.slug} name={o.name} />
      ))}
    </section>
  );
}

function Org({ slug, name }: { slug: string; name: string }) {
  const qc = useQueryClient();
  const members = useQuery({
    queryKey: ["org-members", slug],
    queryFn: () => unwrap(api.GET("/api/orgs/{orgSlug}/members", { params: { path: { orgSlug: slug }, query: { limit: 200 } } })),
  });
  const users = useUsers();
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");
  const [error, setError] = useState<unknown>(null);
  const act = async (p: Promise<unknown>) => {
    setError(null);
    try {
      await p;
      await qc.invalidateQueries({ queryKey: ["org-members", slug] });
    } catch (e) {
      setError(e);
    }
  };
  const ids = new Set((members.data?.items ?? []).map((m) => m.user.id));
  const candidates = (users.data?.items ?? []).filter((u) => !ids.has(u.id));
  const add = (e: FormEvent) => {
    e.preventDefault();
    const id = userId || candidates[0]?.id;
    if (id) void act(unwrap(api.POST("/api/orgs/{orgSlug}/members", { params: { path: { orgSlug: slug } }, body: { userId: id, role } })));
    setUserId("");
  };
  return (
    <div className="cards">
      <h3>{name}</h3>
      {members.isPending ? <Loading what="members" /> : null}
      <ErrorBox error={members.error ?? error} title={"Members of " + name} />
      <ul>
        {(members.data?.items ?? []).map((m) => (
          <li key={m.user.id}>
            {m.user.displayName} ({m.user.email}) — {m.role}{" "}
            <button
              type="button"
              aria-label={`Remove ${m.user.email} from ${name}`}
              onClick={() => act(unwrap(api.DELETE("/api/orgs/{orgSlug}/members", { params: { path: { orgSlug: slug }, query: { userId: m.user.id } } })))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {candidates.length > 0 ? (
        <form onSubmit={add} aria-label={"Add a member to " + name} className="row">
          <Field label={"User to add to " + name}>
            <select value={userId || candidates[0]?.id} onChange={(e) => setUserId(e.target.value)}>
              {candidates.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.displayName} ({u.email})
                </option>
              ))}
            </select>
          </Field>
          <Field label={"Role in " + name}>
            <select value={role} onChange={(e) => setRole(e.target.value as "member" | "admin")}>
              <option>member</option>
              <option>admin</option>
            </select>
          </Field>
          <button type="submit">Add to {name}</button>
        </form>
      ) : null}
    </div>
  );
}
