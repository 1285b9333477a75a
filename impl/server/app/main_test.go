package app_test

import (
	"os"
	"testing"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// TestMain removes the sdods command the process tests share (apptest.SdodsBinary) once they ran.
func TestMain(m *testing.M) {
	code := m.Run()
	apptest.RemoveBinaries()
	os.Exit(code)
}
