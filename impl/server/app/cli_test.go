package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

func createTokenCLI(t *testing.T, s *apptest.Server, email, scopes, name string) (string, error) {
	t.Helper()
	return app.CreateToken(context.Background(), app.Config{DatabaseURL: s.DatabaseURL}, email, strings.Split(scopes, ","), name, time.Hour)
}
