package app_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverclient"
	"github.com/sdods/sdods/impl/server/app/apptest"
)

func TestSetupHappensExactlyOnceUnderConcurrency(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	st, err := s.Client.GetSetupStatusWithResponse(ctx)
	if err != nil || st.JSON200 == nil || !st.JSON200.SetupRequired {
		t.Fatalf("setup status before: %v %s", err, st.Body)
	}
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := s.Client.SetupWithResponse(ctx, serverclient.SetupJSONRequestBody{
				Email: openapi_types.Email("admin" + string(rune('a'+i)) + "@example.com"), Password: apptest.AdminPassword, DisplayName: "A"})
			if err == nil {
				codes[i] = r.StatusCode()
			}
		}(i)
	}
	wg.Wait()
	created, conflicts := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
			conflicts++
		}
	}
	if created != 1 || conflicts != n-1 {
		t.Fatalf("codes %v: want one 201 and %d 409", codes, n-1)
	}
	st, _ = s.Client.GetSetupStatusWithResponse(ctx)
	if st.JSON200.SetupRequired {
		t.Fatal("setup still required after setup")
	}
}

func TestSessionCSRFTokensAndAccount(t *testing.T) {
	s := apptest.Start(t)
	ctx := context.Background()
	admin := s.Setup(t)

	// The cookie's attributes.
	b := s.NewBrowser(t)
	lr, err := b.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: "admin@example.com", Password: apptest.AdminPassword})
	if err != nil || lr.StatusCode() != 200 {
		t.Fatalf("login: %v %s", err, lr.Body)
	}
	setCookie := lr.HTTPResponse.Header.Get("Set-Cookie")
	for _, attr := range []string{"sdods_sid=", "Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=604"} {
		if !strings.Contains(setCookie, attr) {
			t.Errorf("Set-Cookie %q lacks %s", setCookie, attr)
		}
	}
	if strings.Contains(setCookie, "Secure") {
		t.Errorf("Secure on plain HTTP: %q", setCookie)
	}

	me, err := admin.GetAuthMeWithResponse(ctx)
	if err != nil || me.JSON200 == nil || me.JSON200.AuthMethod != "session" || me.JSON200.CsrfToken == nil || *me.JSON200.CsrfToken != admin.CSRF {
		t.Fatalf("me: %v %s", err, me.Body)
	}

	// A non-GET without the CSRF header is refused with its own code.
	csrf := admin.CSRF
	admin.CSRF = ""
	tr, _ := admin.CreateTokenWithResponse(ctx, serverclient.CreateTokenJSONRequestBody{Name: "ci", Scopes: []serverclient.Scope{"runs:read"}})
	if tr.StatusCode() != http.StatusForbidden || !strings.Contains(string(tr.Body), "csrf_invalid") {
		t.Fatalf("without CSRF: %d %s", tr.StatusCode(), tr.Body)
	}
	admin.CSRF = "wrong"
	tr, _ = admin.CreateTokenWithResponse(ctx, serverclient.CreateTokenJSONRequestBody{Name: "ci", Scopes: []serverclient.Scope{"runs:read"}})
	if tr.StatusCode() != http.StatusForbidden {
		t.Fatalf("wrong CSRF: %d %s", tr.StatusCode(), tr.Body)
	}
	admin.CSRF = csrf

	token := apptest.Token(t, admin, "runs:read", "tokens:read", "account:read")
	if !strings.HasPrefix(token, "amx_") || len(token) < 4+43 {
		t.Fatalf("token %q: want amx_ and 256 bits", token)
	}
	bearer := s.Bearer(t, token)
	tme, _ := bearer.GetAuthMeWithResponse(ctx)
	if tme.JSON200 == nil || tme.JSON200.AuthMethod != "token" || tme.JSON200.CsrfToken != nil || tme.JSON200.Scopes == nil {
		t.Fatalf("me by token: %s", tme.Body)
	}
	list, _ := bearer.ListTokensWithResponse(ctx, nil)
	if list.JSON200 == nil || len(list.JSON200.Items) != 1 || strings.Contains(string(list.Body), token) {
		t.Fatalf("token list: %s", list.Body)
	}
	// Scope enforcement and session-only account routes.
	if r, _ := bearer.CreateTokenWithResponse(ctx, serverclient.CreateTokenJSONRequestBody{Name: "x", Scopes: []serverclient.Scope{"runs:read"}}); r.StatusCode() != http.StatusForbidden || !strings.Contains(string(r.Body), "scope_missing") {
		t.Fatalf("token without tokens:write: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := bearer.ListSessionsWithResponse(ctx, nil); r.StatusCode() != http.StatusForbidden || !strings.Contains(string(r.Body), "session_required") {
		t.Fatalf("account route by token: %d %s", r.StatusCode(), r.Body)
	}

	// Sessions: two are listed, the current one marked; revoking others leaves one.
	ss, _ := admin.ListSessionsWithResponse(ctx, nil)
	if ss.JSON200 == nil || len(ss.JSON200.Items) != 2 { // the setup session and the login above
		t.Fatalf("sessions: %s", ss.Body)
	}
	current := 0
	for _, it := range ss.JSON200.Items {
		if it.Current {
			current++
		}
	}
	if current != 1 {
		t.Fatalf("current sessions marked: %d", current)
	}
	ro, _ := admin.RevokeOtherSessionsWithResponse(ctx)
	if ro.JSON200 == nil || ro.JSON200.Revoked != 1 {
		t.Fatalf("revoke others: %s", ro.Body)
	}
	if r, _ := b.GetAuthMeWithResponse(ctx); r.StatusCode() != http.StatusUnauthorized {
		t.Fatalf("revoked session still works: %d", r.StatusCode())
	}

	// Revoking the token ends it.
	if r, _ := admin.RevokeTokenWithResponse(ctx, list.JSON200.Items[0].Id); r.StatusCode() != http.StatusNoContent {
		t.Fatalf("revoke token: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := bearer.GetAuthMeWithResponse(ctx); r.StatusCode() != http.StatusUnauthorized {
		t.Fatalf("revoked token still works: %d", r.StatusCode())
	}
	// A password change revokes the tokens that remain.
	other := s.Bearer(t, apptest.Token(t, admin, "account:read"))
	if r, _ := other.GetAuthMeWithResponse(ctx); r.StatusCode() != http.StatusOK { // and so cached
		t.Fatalf("a new token: %d", r.StatusCode())
	}

	// Password change: the current password is checked; the new one works.
	if r, _ := admin.ChangePasswordWithResponse(ctx, serverclient.ChangePasswordJSONRequestBody{CurrentPassword: "nope", NewPassword: "another long password"}); r.StatusCode() != http.StatusForbidden {
		t.Fatalf("wrong current password: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := admin.ChangePasswordWithResponse(ctx, serverclient.ChangePasswordJSONRequestBody{CurrentPassword: apptest.AdminPassword, NewPassword: "another long password"}); r.StatusCode() != http.StatusNoContent {
		t.Fatalf("change password: %d %s", r.StatusCode(), r.Body)
	}
	if r, _ := s.Client.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: "admin@example.com", Password: "another long password"}); r.StatusCode() != 200 {
		t.Fatalf("login with new password: %d", r.StatusCode())
	}
	if r, _ := other.GetAuthMeWithResponse(ctx); r.StatusCode() != http.StatusUnauthorized {
		t.Fatalf("a token survived the password change: %d", r.StatusCode())
	}
	// Profile.
	up, _ := admin.UpdateMeWithResponse(ctx, serverclient.UpdateMeJSONRequestBody{DisplayName: ptr("Root")})
	if up.JSON200 == nil || up.JSON200.DisplayName != "Root" {
		t.Fatalf("update me: %s", up.Body)
	}

	// Logout ends the session and clears the cookie.
	lo, _ := admin.LogoutWithResponse(ctx)
	if lo.StatusCode() != http.StatusNoContent || !strings.Contains(lo.HTTPResponse.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %q", lo.StatusCode(), lo.HTTPResponse.Header.Get("Set-Cookie"))
	}
	if r, _ := admin.GetAuthMeWithResponse(ctx); r.StatusCode() != http.StatusUnauthorized {
		t.Fatalf("after logout: %d", r.StatusCode())
	}

	// No secret reached the log.
	logs := s.Logs()
	for _, secret := range []string{token, admin.CSRF, apptest.AdminPassword, "another long password"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret appears in the logs")
		}
	}
	for _, c := range b.Jar.Cookies(lr.HTTPResponse.Request.URL) {
		if strings.Contains(logs, c.Value) {
			t.Fatal("a session id appears in the logs")
		}
	}
}

func TestLoginThrottle(t *testing.T) {
	s := apptest.Start(t)
	s.Setup(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		r, _ := s.Client.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: "admin@example.com", Password: "wrong"})
		if r.StatusCode() != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, r.StatusCode())
		}
	}
	r, _ := s.Client.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: "admin@example.com", Password: apptest.AdminPassword})
	if r.StatusCode() != http.StatusTooManyRequests || r.HTTPResponse.Header.Get("Retry-After") == "" {
		t.Fatalf("after 5 failures the right password: %d %s", r.StatusCode(), r.Body)
	}
	// An unknown account answers like a wrong password.
	u, _ := s.Client.LoginWithResponse(ctx, serverclient.LoginJSONRequestBody{Email: "nobody@example.com", Password: "wrong"})
	if u.StatusCode() != http.StatusUnauthorized || !strings.Contains(string(u.Body), "invalid email or password") {
		t.Fatalf("unknown account: %d %s", u.StatusCode(), u.Body)
	}
}

func ptr[T any](v T) *T { return &v }
