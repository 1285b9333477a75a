package httpapi

import (
	"net/http"

	"github.com/sdods/sdods/impl/apierr"
	"github.com/sdods/sdods/impl/authz"
	"github.com/sdods/sdods/impl/oas"
)

// NoCredentials accepts no credential at all: every protected operation is refused.
type NoCredentials struct{}

// Authenticate refuses any presented credential and otherwise reports an anonymous caller.
func (NoCredentials) Authenticate(r *http.Request, _ *oas.Operation) (*authz.Principal, error) {
	if _, err := r.Cookie("sdods_sid"); err == nil || r.Header.Get("Authorization") != "" {
		return nil, apierr.New(apierr.Unauthorized, "the credential is not valid", "")
	}
	return nil, nil
}
