//go:build tools

// Package tools pins the versions of the code generators used by `make generate`.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "github.com/sqlc-dev/sqlc/cmd/sqlc"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
