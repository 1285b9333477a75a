import { createContext, useContext, type ReactNode } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ApiError, setCsrfToken, unwrap, type Schema } from "./api";

export type Me = Schema<"AuthMe">;

type Auth = { me: Me; refresh: () => Promise<void> };
const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const a = useContext(AuthContext);
  if (!a) throw new Error("useAuth outside a signed-in page");
  return a;
}

export function AuthProvider({ me, children }: { me: Me; children: ReactNode }) {
  const qc = useQueryClient();
  const refresh = async () => {
    await qc.invalidateQueries({ queryKey: ["me"] });
  };
  return <AuthContext.Provider value={{ me, refresh }}>{children}</AuthContext.Provider>;
}

/** The caller, or null when signed out; remembers the session's CSRF token for the client. */
export function useMe() {
  return useQuery({
    queryKey: ["me"],
    queryFn: async () => {
      try {
        const me = await unwrap(api.GET("/api/auth/me"));
        setCsrfToken(me.csrfToken);
        return me;
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) {
          setCsrfToken(undefined);
          return null;
        }
        throw e;
      }
    },
    staleTime: 60_000,
  });
}

export function useSetupStatus() {
  return useQuery({
    queryKey: ["setup-status"],
    queryFn: () => unwrap(api.GET("/api/auth/setup-status")),
  });
}

/** Whether the caller may change things in a workspace where it has role. */
export function canWrite(me: Me, role?: string) {
  if (me.user.instanceRole === "admin") return true;
  return role === "editor" || role === "admin";
}
