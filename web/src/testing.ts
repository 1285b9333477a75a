/** Installs the fake server of a component test: handler answers every request of the client. */
export function answer(handler: (req: Request) => Response | Promise<Response>) {
  (globalThis as unknown as { __answer: (h: typeof handler) => void }).__answer(handler);
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

export function apiError(status: number, code: string, message: string, hint = "") {
  return json({ error: { code, message, hint } }, status);
}
