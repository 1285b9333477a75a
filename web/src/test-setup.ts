import "@testing-library/jest-dom/vitest";
import { afterEach, vi } from "vitest";
import { cleanup, configure } from "@testing-library/react";

// The API client captures fetch when it is created: every test answers through this one, which
// calls the handler a test installs with answer().
type Handler = (req: Request) => Response | Promise<Response>;
let handler: Handler = () => new Response("no handler", { status: 599 });
(globalThis as { __answer?: (h: Handler) => void }).__answer = (h) => {
  handler = h;
};
vi.stubGlobal("fetch", (input: RequestInfo | URL, init?: RequestInit) => {
  const req = input instanceof Request ? input : new Request(input, init);
  return Promise.resolve(handler(req));
});

afterEach(() => cleanup());

// findBy… and waitFor wait 1 s by default: on a busy machine a page's fetches and re-renders can
// take longer (CI failed at load 14 waiting for a created schedule's page), and a timeout there
// says nothing about the UI. A test still fails when what it waits for never comes.
configure({ asyncUtilTimeout: 10_000 });

// jsdom lays nothing out; CodeMirror measures text ranges. Empty rectangles are enough here.
if (typeof Range !== "undefined" && !Range.prototype.getClientRects) {
  const empty = () => ({ x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0, toJSON: () => ({}) }) as DOMRect;
  Range.prototype.getClientRects = () => Object.assign([], { item: () => null }) as unknown as DOMRectList;
  Range.prototype.getBoundingClientRect = empty;
}
