// Vitest runs the DOM tests of the React hook (test-dom/) in a jsdom environment; the rest of the
// package's tests run under node:test from dist/test (npm test runs both).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test-dom/**/*.test.ts"],
    environment: "jsdom",
  },
});
