package httpapi

import (
	"context"
	"net/http"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/metrics"
)

// GetMetrics serves the Prometheus metrics to instance admins (the policy lets nobody else here).
func (s *Server) GetMetrics(ctx context.Context, _ serverapi.GetMetricsRequestObject) (serverapi.GetMetricsResponseObject, error) {
	body, err := s.Metrics.Exposition()
	if err != nil {
		// A collector failed (the database did not answer): the rest is still served, as
		// Prometheus's own handler does, and the failure is logged.
		s.Log.WarnContext(ctx, "metrics: a collector failed", "error", err)
	}
	return metricsText(body), nil
}

// metricsText is the exposition with its versioned media type.
type metricsText []byte

func (m metricsText) VisitGetMetricsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", metrics.ContentType)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(m)
	return err
}
