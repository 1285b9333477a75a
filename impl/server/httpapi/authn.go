package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/identity"
	"github.com/sdods/sdods/impl/server/oas"
)

// SessionCookie is the name of the browser session cookie.
const SessionCookie = "sdods_sid"

// CSRFHeader carries a browser session's CSRF token on every non-GET request.
const CSRFHeader = "x-csrf-token"

// Credentials authenticates requests by session cookie or bearer API token.
type Credentials struct {
	Identity *identity.Service
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// Authenticate implements Authenticator. Public operations never refuse a credential (a stale
// cookie must not stop anyone from signing in), but a public read still learns who a valid one
// names (the health check shows admins more); every other operation accepts only the credential
// kinds it declares, and a browser session must carry the CSRF token on non-GET requests.
func (c Credentials) Authenticate(r *http.Request, op *oas.Operation) (*authz.Principal, error) {
	if op.Permission.Target == authz.TargetPublic {
		if !safeMethod(r.Method) {
			return nil, nil
		}
		return c.optional(r), nil
	}
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return nil, apierr.New(apierr.Unauthorized, "unsupported Authorization header", "send Authorization: Bearer amx_…")
		}
		if !op.Bearer {
			return nil, apierr.New(apierr.SessionRequired, "this operation accepts a browser session only",
				"account settings cannot be changed with an API token; sign in to the web UI")
		}
		p, err := c.Identity.AuthenticateToken(ctx, strings.TrimSpace(token))
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, apierr.New(apierr.Unauthorized, "the API token is unknown, expired or revoked", "create a new token")
		}
		return p, nil
	}
	cookie, err := r.Cookie(SessionCookie)
	if err != nil || cookie.Value == "" {
		return nil, nil
	}
	if !op.Cookie {
		return nil, apierr.New(apierr.Unauthorized, "this endpoint accepts bearer tokens only", "send Authorization: Bearer amx_… (create a token with the mcp scope)")
	}
	p, err := c.Identity.AuthenticateSession(ctx, cookie.Value)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, apierr.New(apierr.Unauthorized, "the session has expired or was revoked", "sign in again")
	}
	if !safeMethod(r.Method) && !identity.CSRFMatches(cookie.Value, r.Header.Get(CSRFHeader)) {
		return nil, apierr.New(apierr.CSRFInvalid, "missing or wrong CSRF token",
			"send the csrfToken of GET /api/auth/me in the x-csrf-token header")
	}
	return p, nil
}

// optional returns the principal of a valid bearer token or session cookie, or nil.
func (c Credentials) optional(r *http.Request) *authz.Principal {
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return nil
		}
		p, _ := c.Identity.AuthenticateToken(ctx, strings.TrimSpace(token))
		return p
	}
	if cookie, err := r.Cookie(SessionCookie); err == nil && cookie.Value != "" {
		p, _ := c.Identity.AuthenticateSession(ctx, cookie.Value)
		return p
	}
	return nil
}

// sessionCookie returns the Set-Cookie value of a session; an empty secret clears the cookie.
func sessionCookie(secret string, expires time.Time, secure bool) string {
	c := &http.Cookie{Name: SessionCookie, Value: secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure}
	if secret == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires.UTC()
		c.MaxAge = int(time.Until(expires).Seconds())
	}
	return c.String()
}
