import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { BrowserRouter } from "react-router-dom";
import { QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { App } from "./App";
import { ApiError } from "./api";
import "./style.css";

const queryClient: QueryClient = new QueryClient({
  // A session that ended (expired, revoked elsewhere) answers 401: back to the sign-in form.
  queryCache: new QueryCache({
    onError: (e, q) => {
      if (e instanceof ApiError && e.status === 401 && q.queryKey[0] !== "me") queryClient.setQueryData(["me"], null);
    },
  }),
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again.
      retry: (n, e) => !(e instanceof ApiError && e.status >= 400 && e.status < 500) && n < 2,
      refetchOnWindowFocus: false,
    },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
