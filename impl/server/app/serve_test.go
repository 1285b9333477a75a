package app_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

func TestServeAnswersAndShutsDownCleanly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := app.Config{Addr: addr, DatabaseURL: storetest.NewDatabase(t), DataDir: t.TempDir(), MaxBody: 1 << 20, LogFormat: "json"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, cfg) }()
	var resp *http.Response
	for i := 0; i < 100; i++ {
		resp, err = http.Get("http://" + addr + "/api/health")
		if err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("server never answered: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health %d", resp.StatusCode)
	}
	cancel() // what SIGTERM does through signal.NotifyContext in cmd/sdods
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(35 * time.Second):
		t.Fatal("Serve did not return after shutdown")
	}
	if _, err := http.Get("http://" + addr + "/api/health"); err == nil {
		t.Fatal("still serving after shutdown")
	}
}
