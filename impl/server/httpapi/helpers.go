package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
	"github.com/sdods/sdods/impl/server/identity"
)

// clientMeta is what handlers may know of the HTTP request beyond their request object.
type clientMeta struct {
	UserAgent  string
	ClientAddr string
	Secure     bool // served over TLS (directly, or per the base URL behind a proxy)
}

const ctxClientMeta ctxKey = 100

func metaFrom(ctx context.Context) clientMeta {
	m, _ := ctx.Value(ctxClientMeta).(clientMeta)
	return m
}

// peerAddr is the address of the connection's other end.
func peerAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// principal returns the caller; operations behind the policy always have one.
func principal(ctx context.Context) (*authz.Principal, uuid.UUID, error) {
	p := PrincipalFrom(ctx)
	if p == nil {
		return nil, uuid.Nil, apierr.New(apierr.Unauthorized, "authentication required", "")
	}
	id, err := uuid.Parse(p.UserID)
	if err != nil {
		return nil, uuid.Nil, apierr.Wrap(err, apierr.Unauthorized, "authentication required", "")
	}
	return p, id, nil
}

// pageLimit returns the page size: the limit parameter, or 50.
func pageLimit(limit *int) int {
	if limit == nil || *limit <= 0 {
		return 50
	}
	return *limit
}

// encodeCursor makes an opaque cursor of the sort key of a page's last item.
func encodeCursor(key any) *string {
	b, _ := json.Marshal(key)
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}

// decodeCursor reads a cursor made by encodeCursor into key; nil leaves key untouched.
func decodeCursor(cursor *string, key any) error {
	if cursor == nil || *cursor == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*cursor)
	if err == nil {
		err = json.Unmarshal(b, key)
	}
	if err != nil {
		return apierr.New(apierr.ValidationFailed, "the cursor is not valid", "query parameter \"cursor\": pass nextCursor of the previous page unchanged")
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func instanceRole(admin bool) serverapi.InstanceRole {
	if admin {
		return serverapi.InstanceRoleAdmin
	}
	return serverapi.InstanceRoleUser
}

func toUser(u identity.User) serverapi.User {
	return serverapi.User{Id: u.ID, Email: openapi_types.Email(u.Email), DisplayName: u.DisplayName, Disabled: u.Disabled,
		InstanceRole: instanceRole(u.InstanceAdmin), LastLoginAt: u.LastLoginAt, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

func parseUUID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, apierr.Wrap(err, apierr.Internal, "malformed id", "")
	}
	return id, nil
}

// nonZero returns nil for 0 (an absent optional number), else a pointer to n.
func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
