package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/httpapi"
	"github.com/sdods/sdods/impl/server/metrics"
	"github.com/sdods/sdods/impl/server/oas"
)

// BenchmarkPipeline is the request stack alone, without a database: request id, logging (text,
// discarded), metrics, recovery, body limit, routing, authentication (any bearer), validation,
// policy and text checks, in front of a handler that answers {} — what every request pays
// before and after its handler (issue 31 item 3, docs/benchmarks.md "the request stack").
func BenchmarkPipeline(b *testing.B) {
	doc, err := serverapi.GetSpec()
	if err != nil {
		b.Fatal(err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		b.Fatal(err)
	}
	enf, err := authz.New()
	if err != nil {
		b.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	})
	h, err := httpapi.Pipeline{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Doc: doc, Table: table, Auth: bearerAnyone{},
		Enforcer: enf, MaxBody: 1 << 20, Metrics: metrics.New(nil, nil)}.Handler(api)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{
		{"runs", "/api/runs?project=shop&limit=50"},
		{"features-tag", "/api/projects/shop/features?tag=%40smoke&limit=50"},
		{"audit-target", "/api/audit?targetKind=run&targetId=c4ca4238a0b923820dcc509a6f75849b&limit=50"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			req.Header.Set("Authorization", "Bearer test")
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
				}
			}
		})
	}
}
