import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// The build goes to impl/server/webui/dist, which is committed and embedded in the sdods binary
// (see impl/server/webui). SDODS_WEBUI_OUT builds elsewhere (the drift check of make check-webui).
export default defineConfig({
  plugins: [react()],
  resolve: {
    // clients/ts imports openapi-fetch; resolve it from this package, so clients/ts needs no install.
    alias: { "openapi-fetch": here("./node_modules/openapi-fetch") },
  },
  build: {
    outDir: process.env.SDODS_WEBUI_OUT ?? here("../impl/server/webui/dist"),
    emptyOutDir: true,
    assetsDir: "assets",
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
  },
  server: {
    // npm run dev: the API of a server started with make run.
    proxy: { "/api": "http://127.0.0.1:8080", "/reports": "http://127.0.0.1:8080", "/trace": "http://127.0.0.1:8080" },
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.tsx", "src/**/*.test.ts"],
    setupFiles: ["./src/test-setup.ts"],
    // A page test renders, waits for fetches and user events; 5 s (the default) is too short when
    // the machine is busy, and a timeout there says nothing about the UI.
    testTimeout: 30_000,
  },
});
