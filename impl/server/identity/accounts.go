package identity

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// User is a user of the instance, without the password hash.
type User struct {
	ID                   uuid.UUID
	Email, DisplayName   string
	InstanceAdmin        bool
	Disabled             bool
	LastLoginAt          *time.Time
	CreatedAt, UpdatedAt time.Time
}

func toUser(u db.User) User {
	return User{ID: u.ID, Email: u.Email, DisplayName: u.DisplayName, InstanceAdmin: u.InstanceAdmin, Disabled: u.Disabled,
		LastLoginAt: u.LastLoginAt, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// Session is a browser session, without its secret.
type Session struct {
	ID                               uuid.UUID
	UserAgent, ClientAddr            string
	CreatedAt, LastSeenAt, ExpiresAt time.Time
}

func toSession(s db.Session) Session {
	return Session{ID: s.ID, UserAgent: s.UserAgent, ClientAddr: s.ClientAddr, CreatedAt: s.CreatedAt, LastSeenAt: s.LastSeenAt, ExpiresAt: s.ExpiresAt}
}

// Token is an API token, without its secret.
type Token struct {
	ID                    uuid.UUID
	UserID                uuid.UUID
	Name, Prefix          string
	Scopes                []string
	ExpiresAt, LastUsedAt *time.Time
	CreatedAt             time.Time
}

func toToken(t db.ApiToken) Token {
	return Token{ID: t.ID, UserID: t.UserID, Name: t.Name, Prefix: t.Prefix, Scopes: t.Scopes, ExpiresAt: t.ExpiresAt, LastUsedAt: t.LastUsedAt, CreatedAt: t.CreatedAt}
}

func notFoundOr(err error, what string) error {
	if store.IsNotFound(err) {
		return apierr.Wrap(err, apierr.NotFound, what+" not found", "")
	}
	return err
}

func userWriteError(err error) error {
	if store.IsUniqueViolation(err) {
		return apierr.Wrap(err, apierr.Conflict, "another user has this email", "body member /email: choose another address")
	}
	return notFoundOr(err, "user")
}

// User returns the user with id (not_found when there is none).
func (s *Service) User(ctx context.Context, id uuid.UUID) (User, error) {
	u, err := s.st.GetUser(ctx, id)
	if err != nil {
		return User{}, notFoundOr(err, "user")
	}
	return toUser(u), nil
}

// UserFilter selects a page of ListUsers: users by email after After, Limit+1 at most.
type UserFilter struct {
	Query    *string
	Disabled *bool
	After    *string
	Limit    int
}

// ListUsers lists the instance's users by email.
func (s *Service) ListUsers(ctx context.Context, f UserFilter) ([]User, error) {
	rows, err := s.st.ListUsers(ctx, db.ListUsersParams{AfterEmail: f.After, Query: f.Query, Disabled: f.Disabled, RowLimit: int32(f.Limit + 1)})
	if err != nil {
		return nil, err
	}
	out := make([]User, len(rows))
	for i, u := range rows {
		out[i] = toUser(u)
	}
	return out, nil
}

func instanceRole(admin bool) string {
	if admin {
		return "admin"
	}
	return "user"
}

// CreateUser adds a user with a password (checked against the password rules).
func (s *Service) CreateUser(ctx context.Context, email, displayName, password string, instanceAdmin bool) (User, error) {
	if err := CheckPassword(password); err != nil {
		return User{}, err
	}
	hash, err := s.Hash(ctx, password)
	if err != nil {
		return User{}, err
	}
	var u db.User
	err = s.st.WithTx(ctx, func(q *db.Queries) error {
		u, err = q.CreateUser(ctx, db.CreateUserParams{Email: NormalizeEmail(email), DisplayName: displayName, PasswordHash: hash, InstanceAdmin: instanceAdmin})
		if err != nil {
			return userWriteError(err)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: u.ID.String(), Name: u.Email}, map[string]any{"instanceRole": instanceRole(u.InstanceAdmin)})
	})
	return toUser(u), err
}

// UserChange is a change of a user; nil members stay as they are.
type UserChange struct {
	Email         *string
	DisplayName   *string
	InstanceAdmin *bool
	Disabled      *bool
	// Password, when set, is checked, set, and ends the user's sessions.
	Password *string
}

// UpdateUser changes a user. Disabling a user or setting a password ends their sessions; the
// last active instance admin can be neither demoted nor disabled.
func (s *Service) UpdateUser(ctx context.Context, id uuid.UUID, c UserChange) (User, error) {
	params := db.UpdateUserParams{ID: id, DisplayName: c.DisplayName, Disabled: c.Disabled, InstanceAdmin: c.InstanceAdmin}
	if c.Email != nil {
		e := NormalizeEmail(*c.Email)
		params.Email = &e
	}
	var hash string
	if c.Password != nil {
		if err := CheckPassword(*c.Password); err != nil {
			return User{}, err
		}
		var err error
		if hash, err = s.Hash(ctx, *c.Password); err != nil {
			return User{}, err
		}
	}
	var u db.User
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		// Taken before reading, so that two requests demoting or disabling two admins at once
		// are serialised and the second sees the first's change.
		if err := q.LockInstanceAdmins(ctx); err != nil {
			return err
		}
		before, err := q.GetUser(ctx, id)
		if err != nil {
			return notFoundOr(err, "user")
		}
		if u, err = q.UpdateUser(ctx, params); err != nil {
			return userWriteError(err)
		}
		if before.InstanceAdmin && !before.Disabled && (!u.InstanceAdmin || u.Disabled) {
			n, err := q.CountInstanceAdmins(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				return apierr.New(apierr.Conflict, "this is the last instance admin", "make another user an instance admin first")
			}
		}
		if hash != "" {
			if err := q.SetUserPassword(ctx, db.SetUserPasswordParams{ID: id, PasswordHash: hash}); err != nil {
				return err
			}
		}
		if hash != "" || (u.Disabled && !before.Disabled) {
			if err := q.DeleteSessionsOfUser(ctx, id); err != nil {
				return err
			}
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: u.ID.String(), Name: u.Email},
			map[string]any{"passwordSet": hash != "", "disabled": u.Disabled, "instanceRole": instanceRole(u.InstanceAdmin)})
	})
	s.tokens.invalidate() // the user's tokens: disabled, role or email changed
	return toUser(u), err
}

// UpdateProfile changes a user's own display name or email.
func (s *Service) UpdateProfile(ctx context.Context, id uuid.UUID, displayName, email *string) (User, error) {
	var u db.User
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		params := db.UpdateUserParams{ID: id, DisplayName: displayName}
		if email != nil {
			e := NormalizeEmail(*email)
			params.Email = &e
		}
		var err error
		if u, err = q.UpdateUser(ctx, params); err != nil {
			return userWriteError(err)
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: u.ID.String(), Name: u.Email}, nil)
	})
	s.tokens.invalidate() // the tokens' principals carry the email
	return toUser(u), err
}

// Sessions returns a user's live sessions, newest first.
func (s *Service) Sessions(ctx context.Context, userID uuid.UUID) ([]Session, error) {
	rows, err := s.st.ListUserSessions(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = toSession(r)
	}
	return out, nil
}

// RevokeSession ends one of the user's sessions (not_found when it is not theirs or gone).
func (s *Service) RevokeSession(ctx context.Context, userID, sessionID uuid.UUID) error {
	return s.st.WithTx(ctx, func(q *db.Queries) error {
		n, err := q.DeleteUserSession(ctx, db.DeleteUserSessionParams{ID: sessionID, UserID: userID})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierr.New(apierr.NotFound, "session not found", "list your sessions with GET /api/me/sessions")
		}
		return audit.Record(ctx, q, audit.Target{Kind: "session", ID: sessionID.String()}, nil)
	})
}

// RevokeOtherSessions ends every session of the user but current and returns how many.
func (s *Service) RevokeOtherSessions(ctx context.Context, userID, current uuid.UUID) (int64, error) {
	var n int64
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		var err error
		if n, err = q.DeleteOtherSessions(ctx, db.DeleteOtherSessionsParams{UserID: userID, ID: current}); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "user", ID: userID.String()}, map[string]any{"revoked": strconv.FormatInt(n, 10)})
	})
	return n, err
}

// TokenPage selects a page of Tokens: newest first, those before (BeforeCreated, BeforeID)
// when set, Limit+1 at most.
type TokenPage struct {
	BeforeCreated *time.Time
	BeforeID      uuid.UUID
	Limit         int
}

// Tokens lists a user's live tokens, newest first.
func (s *Service) Tokens(ctx context.Context, userID uuid.UUID, page TokenPage) ([]Token, error) {
	params := db.ListTokensParams{UserID: uuid.NullUUID{UUID: userID, Valid: true}, RowLimit: int32(page.Limit + 1)}
	if page.BeforeCreated != nil {
		params.BeforeCreated = page.BeforeCreated
		params.BeforeID = uuid.NullUUID{UUID: page.BeforeID, Valid: true}
	}
	rows, err := s.st.ListTokens(ctx, params)
	if err != nil {
		return nil, err
	}
	out := make([]Token, len(rows))
	for i, t := range rows {
		out[i] = toToken(t)
	}
	return out, nil
}

// RevokeToken revokes a token of userID, or anyone's when asAdmin; a token of someone else is
// not_found, as one that does not exist.
func (s *Service) RevokeToken(ctx context.Context, userID uuid.UUID, asAdmin bool, tokenID uuid.UUID) error {
	err := s.st.WithTx(ctx, func(q *db.Queries) error {
		t, err := q.GetToken(ctx, tokenID)
		if err != nil && !store.IsNotFound(err) {
			return err
		}
		if err != nil || (t.UserID != userID && !asAdmin) {
			return apierr.New(apierr.NotFound, "token not found", "list your tokens with GET /api/tokens")
		}
		if _, err := q.RevokeToken(ctx, tokenID); err != nil {
			return err
		}
		return audit.Record(ctx, q, audit.Target{Kind: "token", ID: tokenID.String(), Name: t.Name}, nil)
	})
	s.tokens.invalidate()
	return err
}
