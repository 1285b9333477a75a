package app

import (
	"log/slog"
	"net/http"

	"github.com/sdods/sdods/impl/server/apierr"
)

// roleHandler is what a process of cfg.Role serves: everything, or (RoleWorker) only /api/health,
// through the full pipeline, and a 404 in the one error shape for any other path.
func roleHandler(role string, h http.Handler, log *slog.Logger) http.Handler {
	if role != RoleWorker {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/health" {
			h.ServeHTTP(w, r)
			return
		}
		apierr.Write(w, r, log, apierr.New(apierr.NotFound, "this sdods process only works jobs (-role worker)",
			"send API requests to a process started with -role api or -role all"))
	})
}
