package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/store"
)

// SessionLifetime is how long a browser session lives after its last use.
const SessionLifetime = 7 * 24 * time.Hour

// sessionTouchEvery limits the writes that slide a session: at most one a minute per session.
const sessionTouchEvery = time.Minute

// MinPasswordLength is the shortest password accepted for a new password.
const MinPasswordLength = 12

// Throttle bounds password guessing and the work it costs. Every attempt is counted before its
// password is checked (one atomic statement per key), so concurrent attempts cannot all slip
// through before the first failure is recorded.
type Throttle struct {
	// PairMaxFailures failures of one account from one client address in Window lock that pair for Lock.
	PairMaxFailures int
	// AccountMaxFailures failures of one account from any address in Window lock the account for Lock.
	AccountMaxFailures int
	// AddrSlowAfter attempts from one client address in Window slow each further attempt from it by
	// AddrDelayStep per attempt beyond, at most AddrMaxDelay; the address is never locked, so one
	// address (a proxy, a NAT) cannot lock everyone behind it out.
	AddrSlowAfter int
	AddrDelayStep time.Duration
	AddrMaxDelay  time.Duration
	// PasswordMaxFailures wrong current passwords in Window lock an account's password change for Lock.
	PasswordMaxFailures int
	Window              time.Duration
	Lock                time.Duration
	// HashSlots bounds the password hashes computed at once (0: GOMAXPROCS, the CPUs the process
	// may use); a request that waits longer than HashWait for a slot is answered 503 with
	// Retry-After.
	HashSlots int
	HashWait  time.Duration
}

// DefaultThrottle: 5 failures per (address, account) or 20 per account in 15 minutes lock it for 15
// minutes; beyond 50 attempts per address in 15 minutes each is delayed by 200 ms per attempt
// beyond, at most 5 s; 5 wrong current passwords lock password changes; one hash per CPU at once,
// waiting at most 5 s.
var DefaultThrottle = Throttle{PairMaxFailures: 5, AccountMaxFailures: 20, AddrSlowAfter: 50, AddrDelayStep: 200 * time.Millisecond,
	AddrMaxDelay: 5 * time.Second, PasswordMaxFailures: 5, Window: 15 * time.Minute, Lock: 15 * time.Minute, HashWait: 5 * time.Second}

// Service is identity's domain logic over the store.
type Service struct {
	st       *store.Store
	throttle Throttle
	// hashSlots holds one token per password hash being computed: argon2id takes 19 MiB and a
	// CPU for tens of milliseconds, so unbounded concurrent logins exhaust memory.
	hashSlots chan struct{}
	// dummyHash is verified against when the account does not exist, so that a login for an
	// unknown email costs as much time as one with a wrong password.
	dummyHash string
	// tokens caches API tokens' principals for TokenCacheTTL; every change to tokens or users
	// empties it.
	tokens *tokenCache
}

// New returns the identity service.
func New(st *store.Store, throttle Throttle) (*Service, error) {
	h, err := HashPassword("sdods-timing-equaliser")
	if err != nil {
		return nil, err
	}
	slots := throttle.HashSlots
	if slots <= 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	return &Service{st: st, throttle: throttle, dummyHash: h, hashSlots: make(chan struct{}, slots), tokens: newTokenCache()}, nil
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
func (s *Service) Setup(ctx context.Context, email, password, displayName string) (User, error) {
	if err := CheckPassword(password); err != nil {
		return User{}, err
	}
	// Once set up, refuse before spending a hash on it.
	if required, err := s.SetupRequired(ctx); err != nil {
		return User{}, err
	} else if !required {
		return User{}, ErrSetupDone
	}
	hash, err := s.Hash(ctx, password)
	if err != nil {
		return User{}, err
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
	return toUser(user), err
}

// LoginResult is an opened session.
type LoginResult struct {
	User    User
	Session Session
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

// errBusy answers a request that found no free password-hashing slot in time (never modified:
// compared by identity).
var errBusy = func() *apierr.Error {
	e := apierr.New(apierr.Unavailable, "the server is busy checking other passwords", "retry in a second")
	e.RetryAfter = 1
	return e
}()

// withHashSlot runs fn, which hashes or verifies a password, once a slot is free; errBusy when
// none frees up within HashWait.
func (s *Service) withHashSlot(ctx context.Context, fn func() error) error {
	select {
	case s.hashSlots <- struct{}{}:
	default:
		if s.throttle.HashWait <= 0 {
			return errBusy
		}
		t := time.NewTimer(s.throttle.HashWait)
		defer t.Stop()
		select {
		case s.hashSlots <- struct{}{}:
		case <-t.C:
			return errBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { <-s.hashSlots }()
	return fn()
}

// Hash returns the hash of a new password, computed in a hashing slot.
func (s *Service) Hash(ctx context.Context, password string) (string, error) {
	var h string
	err := s.withHashSlot(ctx, func() (err error) {
		h, err = HashPassword(password)
		return err
	})
	return h, err
}

// verify checks password against hash in a hashing slot.
func (s *Service) verify(ctx context.Context, hash, password string) (bool, error) {
	var ok bool
	err := s.withHashSlot(ctx, func() (err error) {
		ok, err = VerifyPassword(hash, password)
		return err
	})
	return ok, err
}

// attempt counts one attempt for key and refuses it when the key is locked.
func (s *Service) attempt(ctx context.Context, key string, max int) (int, error) {
	row, err := s.st.CountLoginAttempt(ctx, db.CountLoginAttemptParams{Key: key, MaxAttempts: int32(max),
		WindowSeconds: int32(s.throttle.Window.Seconds()), LockSeconds: int32(s.throttle.Lock.Seconds())})
	if err != nil {
		return 0, fmt.Errorf("count login attempt: %w", err)
	}
	if row.LockedUntil != nil && row.LockedUntil.After(time.Now()) {
		return int(row.Failures), rateLimited(*row.LockedUntil)
	}
	return int(row.Failures), nil
}

// forgive takes back attempts that were counted but not evaluated or not failed.
func (s *Service) forgive(ctx context.Context, keys ...string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, k := range keys {
		_ = s.st.ForgiveLoginAttempt(ctx, k)
	}
}

// addrDelay is how long an attempt from an address that made n attempts waits.
func (s *Service) addrDelay(n int) time.Duration {
	over := n - s.throttle.AddrSlowAfter
	if s.throttle.AddrSlowAfter <= 0 || over <= 0 {
		return 0
	}
	d := time.Duration(over) * s.throttle.AddrDelayStep
	if d > s.throttle.AddrMaxDelay {
		d = s.throttle.AddrMaxDelay
	}
	return d
}

// Login checks the password and opens a session. Each attempt is counted per client address, per
// (address, account) and per account before the password is checked; a locked pair or account
// answers rate_limited until the lock ends, a busy address only waits.
func (s *Service) Login(ctx context.Context, email, password string, meta ClientMeta) (*LoginResult, error) {
	email = NormalizeEmail(email)
	account := strings.ToLower(email)
	addrKey := "addr:" + meta.ClientAddr
	pairKey := "pair:" + meta.ClientAddr + " " + account
	accountKey := "account:" + account
	n, err := s.attempt(ctx, addrKey, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if d := s.addrDelay(n); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if _, err := s.attempt(ctx, pairKey, s.throttle.PairMaxFailures); err != nil {
		return nil, err
	}
	if _, err := s.attempt(ctx, accountKey, s.throttle.AccountMaxFailures); err != nil {
		return nil, err
	}
	user, err := s.st.GetUserByEmail(ctx, email)
	ok := false
	switch {
	case err == nil:
		ok, err = s.verify(ctx, user.PasswordHash, password)
		if err != nil {
			if errors.Is(err, errBusy) {
				s.forgive(ctx, addrKey, pairKey, accountKey)
				return nil, err
			}
			return nil, fmt.Errorf("verify password of %s: %w", user.ID, err)
		}
		ok = ok && !user.Disabled
	case store.IsNotFound(err):
		if _, err := s.verify(ctx, s.dummyHash, password); errors.Is(err, errBusy) {
			s.forgive(ctx, addrKey, pairKey, accountKey)
			return nil, err
		}
	default:
		return nil, err
	}
	if !ok {
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
		for _, k := range []string{pairKey, accountKey} {
			if err := q.ClearLoginFailures(ctx, k); err != nil {
				return err
			}
		}
		if err := q.ForgiveLoginAttempt(ctx, addrKey); err != nil {
			return err
		}
		if r := audit.RequestFrom(ctx); r != nil {
			r.Actor = audit.Actor{Kind: "user", ID: user.ID, Name: user.Email}
		}
		res = &LoginResult{User: toUser(user), Session: toSession(sess), Secret: secret}
		return audit.Record(ctx, q, audit.Target{Kind: "session", ID: sess.ID.String()}, nil)
	})
	return res, err
}

// PasswordChange is what ChangePassword did besides setting the password.
type PasswordChange struct {
	SessionsRevoked, TokensRevoked int64
}

// ChangePassword checks the current password of a signed-in user, sets the new one, ends every
// other session and revokes every API token of the user: whoever knew the old password may have
// minted tokens with it. Wrong current passwords are throttled like logins.
func (s *Service) ChangePassword(ctx context.Context, userID, currentSession uuid.UUID, current, next string) (PasswordChange, error) {
	if err := CheckPassword(next); err != nil {
		return PasswordChange{}, apierr.New(apierr.ValidationFailed, "the new password is too short",
			fmt.Sprintf("body member /newPassword: use at least %d characters", MinPasswordLength))
	}
	key := "password:" + userID.String()
	if _, err := s.attempt(ctx, key, s.throttle.PasswordMaxFailures); err != nil {
		return PasswordChange{}, err
	}
	u, err := s.st.GetUser(ctx, userID)
	if err != nil {
		return PasswordChange{}, err
	}
	ok, err := s.verify(ctx, u.PasswordHash, current)
	if errors.Is(err, errBusy) {
		s.forgive(ctx, key)
	}
	if err != nil {
		return PasswordChange{}, err
	}
	if !ok {
		return PasswordChange{}, apierr.New(apierr.Forbidden, "the current password is wrong",
			"body member /currentPassword: enter your present password; repeated failures lock password changes for a while")
	}
	hash, err := s.Hash(ctx, next)
	if err != nil {
		return PasswordChange{}, err
	}
	var out PasswordChange
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		if err := q.SetUserPassword(ctx, db.SetUserPasswordParams{ID: userID, PasswordHash: hash}); err != nil {
			return err
		}
		if out.SessionsRevoked, err = q.DeleteOtherSessions(ctx, db.DeleteOtherSessionsParams{UserID: userID, ID: currentSession}); err != nil {
			return err
		}
		if out.TokensRevoked, err = q.RevokeUserTokens(ctx, userID); err != nil {
			return err
		}
		if err := q.ClearLoginFailures(ctx, key); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: userID.String(), Name: u.Email},
			map[string]any{"sessionsRevoked": out.SessionsRevoked, "tokensRevoked": out.TokensRevoked})
	})
	s.tokens.invalidate()
	return out, err
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
	key := sha256.Sum256([]byte(token))
	p, gen := s.tokens.get(key)
	if p != nil {
		return p, nil
	}
	row, err := s.st.GetTokenBySecret(ctx, key[:])
	if store.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := row.ApiToken
	if s.tokens.claimTouch(t.ID, t.LastUsedAt) {
		if err := s.st.TouchToken(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	p = &authz.Principal{UserID: row.User.ID.String(), Label: row.User.Email, Method: authz.MethodToken,
		InstanceAdmin: row.User.InstanceAdmin, Scopes: t.Scopes, CredentialID: t.ID.String()}
	if t.ExpiresAt != nil {
		p.ExpiresAt = *t.ExpiresAt
	}
	s.tokens.put(key, p, gen)
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
	Token  Token
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
		out = CreatedToken{Token: toToken(t), Secret: secret}
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
func (s *Service) UserByEmail(ctx context.Context, email string) (User, error) {
	u, err := s.st.GetUserByEmail(ctx, NormalizeEmail(email))
	if store.IsNotFound(err) {
		return User{}, apierr.New(apierr.NotFound, fmt.Sprintf("no user with email %s", email), "")
	}
	return toUser(u), err
}
