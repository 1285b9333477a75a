package identity

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/apierr"
	"github.com/sdods/sdods/impl/audit"
	"github.com/sdods/sdods/impl/authz"
	"github.com/sdods/sdods/impl/store"
)

// SessionLifetime is how long a browser session lives after its last use.
const SessionLifetime = 7 * 24 * time.Hour

// sessionTouchEvery limits the writes that slide a session: at most one a minute per session.
const sessionTouchEvery = time.Minute

// MinPasswordLength is the shortest password accepted for a new password.
const MinPasswordLength = 12

// Throttle bounds failed logins: after MaxFailures in Window, the key is locked for Lock.
type Throttle struct {
	AccountMaxFailures int
	AddrMaxFailures    int
	Window             time.Duration
	Lock               time.Duration
}

// DefaultThrottle: 5 failures per account or 50 per client address in 15 minutes lock it for 15 minutes.
var DefaultThrottle = Throttle{AccountMaxFailures: 5, AddrMaxFailures: 50, Window: 15 * time.Minute, Lock: 15 * time.Minute}

// Service is identity's domain logic over the store.
type Service struct {
	st       *store.Store
	throttle Throttle
	// dummyHash is verified against when the account does not exist, so that a login for an
	// unknown email costs as much time as one with a wrong password.
	dummyHash string
}

// New returns the identity service.
func New(st *store.Store, throttle Throttle) (*Service, error) {
	h, err := HashPassword("sdods-timing-equaliser")
	if err != nil {
		return nil, err
	}
	return &Service{st: st, throttle: throttle, dummyHash: h}, nil
}

// ClientMeta describes the client a session is opened for.
type ClientMeta struct {
	UserAgent  string
	ClientAddr string
}

// NormalizeEmail trims an email; comparisons are case-insensitive in the database.
func NormalizeEmail(email string) string { return strings.TrimSpace(email) }

// CheckPassword refuses a password too short to be a new password.
func CheckPassword(pw string) error {
	if len([]rune(pw)) < MinPasswordLength {
		return apierr.New(apierr.ValidationFailed, "the password is too short",
			fmt.Sprintf("body member /password: use at least %d characters", MinPasswordLength))
	}
	return nil
}

// SetupRequired reports whether the first administrator still has to be created.
func (s *Service) SetupRequired(ctx context.Context) (bool, error) {
	_, err := s.st.GetSetup(ctx)
	if store.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// ErrSetupDone is the answer to a second setup.
var ErrSetupDone = apierr.New(apierr.Conflict, "setup has already been completed", "sign in with the administrator account")

// Setup creates the first administrator, with a default organisation and workspace, exactly once: concurrent calls race for the single
// row of instance_setup and all but one roll back with ErrSetupDone.
func (s *Service) Setup(ctx context.Context, email, password, displayName string) (db.User, error) {
	if err := CheckPassword(password); err != nil {
		return db.User{}, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return db.User{}, err
	}
	var user db.User
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		if _, err := q.GetSetup(ctx); err == nil {
			return ErrSetupDone
		} else if !store.IsNotFound(err) {
			return err
		}
		u, err := q.CreateUser(ctx, db.CreateUserParams{Email: NormalizeEmail(email), DisplayName: displayName, PasswordHash: hash, InstanceAdmin: true})
		if err != nil {
			if store.IsUniqueViolation(err) {
				return ErrSetupDone
			}
			return err
		}
		n, err := q.CompleteSetup(ctx, u.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrSetupDone
		}
		user = u
		// A fresh instance gets an organisation and a workspace to start in, administered by
		// the first admin; the hierarchy can be reshaped later (POST /api/hierarchy/sync).
		org, err := q.CreateOrg(ctx, db.CreateOrgParams{Slug: "default", Name: "Default"})
		if err != nil {
			return err
		}
		if _, err := q.UpsertOrgMember(ctx, db.UpsertOrgMemberParams{OrgID: org.ID, UserID: u.ID, Role: "admin"}); err != nil {
			return err
		}
		ws, err := q.CreateWorkspace(ctx, db.CreateWorkspaceParams{OrgID: org.ID, Slug: "default", Name: "Default"})
		if err != nil {
			return err
		}
		if _, err := q.AddWorkspaceMember(ctx, db.AddWorkspaceMemberParams{WorkspaceID: ws.ID, UserID: u.ID, Role: "admin"}); err != nil {
			return err
		}
		if r := audit.RequestFrom(ctx); r != nil {
			r.Actor = audit.Actor{Kind: "user", ID: u.ID, Name: u.Email}
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: u.ID.String(), Name: u.Email}, map[string]any{"instanceAdmin": true})
	})
	return user, err
}

// LoginResult is an opened session.
type LoginResult struct {
	User    db.User
	Session db.Session
	// Secret is the cookie value; only its hash is stored.
	Secret string
}

// errInvalidLogin never says which of email and password was wrong.
var errInvalidLogin = apierr.New(apierr.Unauthorized, "invalid email or password", "check the email and password; repeated failures lock the account for a while")

func rateLimited(until time.Time) *apierr.Error {
	secs := int(time.Until(until).Seconds()) + 1
	e := apierr.New(apierr.RateLimited, "too many failed sign-in attempts", fmt.Sprintf("try again in %d seconds", secs))
	e.RetryAfter = secs
	return e
}

// Login checks the password and opens a session. Failures are counted per account and per
// client address; a locked key answers rate_limited until the lock ends.
func (s *Service) Login(ctx context.Context, email, password string, meta ClientMeta) (*LoginResult, error) {
	email = NormalizeEmail(email)
	accountKey := "account:" + strings.ToLower(email)
	addrKey := "addr:" + meta.ClientAddr
	for _, key := range []string{accountKey, addrKey} {
		until, err := s.st.GetLoginLock(ctx, key)
		if err == nil && until != nil {
			return nil, rateLimited(*until)
		} else if err != nil && !store.IsNotFound(err) {
			return nil, err
		}
	}
	user, err := s.st.GetUserByEmail(ctx, email)
	ok := false
	switch {
	case err == nil:
		ok, err = VerifyPassword(user.PasswordHash, password)
		if err != nil {
			return nil, fmt.Errorf("verify password of %s: %w", user.ID, err)
		}
		ok = ok && !user.Disabled
	case store.IsNotFound(err):
		_, _ = VerifyPassword(s.dummyHash, password)
	default:
		return nil, err
	}
	if !ok {
		if err := s.recordFailure(ctx, accountKey, s.throttle.AccountMaxFailures); err != nil {
			return nil, err
		}
		if err := s.recordFailure(ctx, addrKey, s.throttle.AddrMaxFailures); err != nil {
			return nil, err
		}
		return nil, errInvalidLogin
	}
	secret, hash, err := NewSessionSecret()
	if err != nil {
		return nil, err
	}
	var res *LoginResult
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		sess, err := q.CreateSession(ctx, db.CreateSessionParams{SecretHash: hash, UserID: user.ID,
			UserAgent: truncate(meta.UserAgent, 512), ClientAddr: meta.ClientAddr, ExpiresAt: time.Now().Add(SessionLifetime)})
		if err != nil {
			return err
		}
		if err := q.RecordLogin(ctx, user.ID); err != nil {
			return err
		}
		if err := q.ClearLoginFailures(ctx, accountKey); err != nil {
			return err
		}
		if r := audit.RequestFrom(ctx); r != nil {
			r.Actor = audit.Actor{Kind: "user", ID: user.ID, Name: user.Email}
		}
		res = &LoginResult{User: user, Session: sess, Secret: secret}
		return audit.Record(ctx, q, audit.Target{Kind: "session", ID: sess.ID.String()}, nil)
	})
	return res, err
}

func (s *Service) recordFailure(ctx context.Context, key string, max int) error {
	n, err := s.st.RecordLoginFailure(ctx, db.RecordLoginFailureParams{Key: key, WindowSeconds: int32(s.throttle.Window.Seconds())})
	if err != nil {
		return fmt.Errorf("record login failure: %w", err)
	}
	if int(n) >= max {
		return s.st.LockLogin(ctx, db.LockLoginParams{Key: key, LockSeconds: int32(s.throttle.Lock.Seconds())})
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// PrincipalOf returns the principal of a user signed in by a session.
func sessionPrincipal(u db.User, sess db.Session, secret string) *authz.Principal {
	return &authz.Principal{UserID: u.ID.String(), Label: u.Email, Method: authz.MethodSession, InstanceAdmin: u.InstanceAdmin,
		CredentialID: sess.ID.String(), CSRFToken: CSRFToken(secret), ExpiresAt: sess.ExpiresAt}
}

// AuthenticateSession returns the principal of a live session cookie and slides its expiry;
// nil without error when the session does not exist or has expired.
func (s *Service) AuthenticateSession(ctx context.Context, secret string) (*authz.Principal, error) {
	row, err := s.st.GetSessionBySecret(ctx, HashSecret(secret))
	if store.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sess := row.Session
	if time.Since(sess.LastSeenAt) > sessionTouchEvery {
		sess.ExpiresAt = time.Now().Add(SessionLifetime)
		if err := s.st.TouchSession(ctx, db.TouchSessionParams{ID: sess.ID, ExpiresAt: sess.ExpiresAt}); err != nil {
			return nil, err
		}
	}
	return sessionPrincipal(row.User, sess, secret), nil
}

// AuthenticateToken returns the principal of a live API token; nil without error when the token
// is unknown, revoked or expired.
func (s *Service) AuthenticateToken(ctx context.Context, token string) (*authz.Principal, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return nil, nil
	}
	row, err := s.st.GetTokenBySecret(ctx, HashSecret(token))
	if store.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := row.ApiToken
	if t.LastUsedAt == nil || time.Since(*t.LastUsedAt) > sessionTouchEvery {
		if err := s.st.TouchToken(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	p := &authz.Principal{UserID: row.User.ID.String(), Label: row.User.Email, Method: authz.MethodToken,
		InstanceAdmin: row.User.InstanceAdmin, Scopes: t.Scopes, CredentialID: t.ID.String()}
	if t.ExpiresAt != nil {
		p.ExpiresAt = *t.ExpiresAt
	}
	return p, nil
}

// Logout ends a session.
func (s *Service) Logout(ctx context.Context, sessionID uuid.UUID) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		if err := q.DeleteSession(ctx, sessionID); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "session", ID: sessionID.String()}, nil)
	})
}

// CreatedToken is a new API token; Secret is shown once and never stored.
type CreatedToken struct {
	Token  db.ApiToken
	Secret string
}

// CreateToken issues an API token for a user.
func (s *Service) CreateToken(ctx context.Context, userID uuid.UUID, name string, scopes []string, expiresAt *time.Time) (CreatedToken, error) {
	if err := ValidScopes(scopes); err != nil {
		return CreatedToken{}, err
	}
	if expiresAt != nil && !expiresAt.After(time.Now()) {
		return CreatedToken{}, apierr.New(apierr.ValidationFailed, "the expiry is in the past", "body member /expiresAt: give a future time or leave it out")
	}
	secret, hash, err := NewTokenSecret()
	if err != nil {
		return CreatedToken{}, err
	}
	var out CreatedToken
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		t, err := q.CreateToken(ctx, db.CreateTokenParams{UserID: userID, Name: name, Prefix: secret[:len(TokenPrefix)+6],
			SecretHash: hash, Scopes: scopes, ExpiresAt: expiresAt})
		if err != nil {
			return err
		}
		out = CreatedToken{Token: t, Secret: secret}
		return audit.Record(ctx, q, audit.Target{Kind: "token", ID: t.ID.String(), Name: name}, map[string]any{"scopes": scopes})
	})
	return out, err
}

// Scopes is the complete list of token scopes (the Scope enum of openapi/server.yaml).
var Scopes = []string{
	"account:read", "account:write", "admin:read", "admin:write", "agents:read", "agents:write",
	"artifacts:read", "features:read", "features:write", "mcp", "projects:read", "projects:write",
	"runs:ingest", "runs:read", "runs:write", "schedules:read", "schedules:write", "stats:read",
	"tokens:read", "tokens:write",
}

// ValidScopes refuses an empty or unknown scope list.
func ValidScopes(scopes []string) error {
	if len(scopes) == 0 {
		return apierr.New(apierr.ValidationFailed, "a token needs at least one scope", "body member /scopes: name the scopes, e.g. runs:read")
	}
	known := map[string]bool{}
	for _, s := range Scopes {
		known[s] = true
	}
	for _, s := range scopes {
		if !known[s] {
			return apierr.New(apierr.ValidationFailed, fmt.Sprintf("unknown scope %q", s), "known scopes: "+strings.Join(Scopes, ", "))
		}
	}
	return nil
}

// UserByEmail finds a user (for the command line).
func (s *Service) UserByEmail(ctx context.Context, email string) (db.User, error) {
	u, err := s.st.GetUserByEmail(ctx, NormalizeEmail(email))
	if store.IsNotFound(err) {
		return u, apierr.New(apierr.NotFound, fmt.Sprintf("no user with email %s", email), "")
	}
	return u, err
}
