// Compile-time checks that the generated types fit the clients; never executed.
import { createRulesClient, createServerClient, type ServerSchema } from "./index";

export async function example(): Promise<void> {
  const api = createServerClient("http://localhost:8080", { token: "amx_example" });
  const runs = await api.GET("/api/runs", { params: { query: { project: "shop", status: ["failed"], limit: 20 } } });
  const page: ServerSchema<"RunList"> | undefined = runs.data;
  void page?.nextCursor;
  const started = await api.POST("/api/runs", { body: { project: "shop", tags: "@smoke" } });
  if (started.error) throw new Error(started.error.error.code);
  const feature = await api.PUT("/api/projects/{slug}/features/{path}", {
    params: { path: { slug: "shop", path: "checkout/pay.feature" }, header: { "If-Match": "*" } },
    body: { content: "Feature: Pay\n" },
  });
  if (feature.response.status === 422) void feature.error;
  await api.POST("/api/runs/{runId}/baselines/accept", {
    params: { path: { runId: started.data.id } },
    body: { all: true },
  });

  const rules = createRulesClient("http://localhost:8090", { token: () => "secret" });
  const ev = await rules.POST("/evaluations", {
    body: { ruleset: "orders", data: { total: 3 }, view: { page: "checkout" }, locale: "fr-CA" },
  });
  for (const f of ev.data?.findings ?? []) void f.location.page;
}
