package apierr_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/apierr"
)

// startRecorder is an access-log recorder in miniature: it knows whether a status was sent.
type startRecorder struct {
	http.ResponseWriter
	status int
}

func (s *startRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *startRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *startRecorder) ResponseStarted() bool { return s.status != 0 }

// outer wraps a writer as other middleware does, reachable through Unwrap only.
type outer struct{ http.ResponseWriter }

func (o outer) Unwrap() http.ResponseWriter { return o.ResponseWriter }

func TestWriteAfterTheResponseBegan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		begin      func(w http.ResponseWriter)
		wantStatus int
		wantBody   string
		wantError  bool
	}{
		{"nothing sent yet: the error is the response", func(http.ResponseWriter) {}, http.StatusInternalServerError, "", true},
		{"a status sent: it stays", func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) }, http.StatusOK, "", false},
		{"part of a body sent: nothing is appended", func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"items":[`)) }, http.StatusOK, `{"items":[`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			rec := httptest.NewRecorder()
			w := outer{&startRecorder{ResponseWriter: rec}}
			tc.begin(w)
			r := httptest.NewRequest("GET", "/api/runs", nil)
			apierr.Write(w, r, log, apierr.Wrap(errors.New("write tcp: broken pipe"), apierr.Internal, "the response could not be written", ""))
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tc.wantStatus)
			}
			if !tc.wantError {
				if got := rec.Body.String(); got != tc.wantBody {
					t.Fatalf("body %q, want %q", got, tc.wantBody)
				}
				if !strings.Contains(logs.String(), "response not completed") || !strings.Contains(logs.String(), "broken pipe") {
					t.Fatalf("log %q does not say the response was not completed, with its cause", logs.String())
				}
				return
			}
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code == "" {
				t.Fatalf("body %q is not an error (%v)", rec.Body.String(), err)
			}
		})
	}
}
