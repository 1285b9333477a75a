// Package authz decides whether a principal may call an operation: the operation's
// x-permission (from openapi/server.yaml), the caller's roles (casbin, policy/) and the token's
// scopes. It fails closed: anything it does not know is refused.
package authz

import (
	"fmt"
	"slices"
	"time"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
	stringadapter "github.com/casbin/casbin/v2/persist/string-adapter"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/policy"
)

// Target says whose role an operation is checked against.
type Target string

// The targets of x-permission.
const (
	TargetPublic    Target = "public"
	TargetSelf      Target = "self"
	TargetInstance  Target = "instance"
	TargetWorkspace Target = "workspace"
)

// Action is what an operation does, ordered read < run < edit < manage by the role hierarchy.
type Action string

// The actions of x-permission.
const (
	ActionRead   Action = "read"
	ActionRun    Action = "run"
	ActionEdit   Action = "edit"
	ActionManage Action = "manage"
)

// Permission is an operation's x-permission.
type Permission struct {
	Target Target `json:"target"`
	Action Action `json:"action"`
	Scope  string `json:"scope"`
}

// Valid returns an error unless the permission names a known target and action, and a scope
// wherever a token may call it.
func (p Permission) Valid() error {
	switch p.Target {
	case TargetPublic:
		return nil
	case TargetSelf, TargetInstance, TargetWorkspace:
	default:
		return fmt.Errorf("unknown target %q", p.Target)
	}
	switch p.Action {
	case ActionRead, ActionRun, ActionEdit, ActionManage:
	default:
		return fmt.Errorf("unknown action %q", p.Action)
	}
	if p.Scope == "" {
		return fmt.Errorf("no scope")
	}
	return nil
}

// Method is how a principal authenticated.
type Method string

// The authentication methods.
const (
	MethodSession Method = "session"
	MethodToken   Method = "token"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	UserID        string
	Label         string
	Method        Method
	InstanceAdmin bool
	// Scopes are a token's scopes; a browser session is not limited by scopes.
	Scopes []string
	// CredentialID is the session or token id (never its secret).
	CredentialID string
	// CSRFToken is the value a browser session sends in x-csrf-token (sessions only).
	CSRFToken string
	// ExpiresAt is when the session or token expires (zero: never).
	ExpiresAt time.Time
}

// HasScope reports whether the principal's credential allows scope.
func (p *Principal) HasScope(scope string) bool {
	return p.Method == MethodSession || slices.Contains(p.Scopes, scope)
}

// Role is a workspace role.
type Role string

// The workspace roles.
const (
	RoleViewer Role = "viewer"
	RoleEditor Role = "editor"
	RoleAdmin  Role = "admin"
)

// Roles returns the workspace roles from least to most powerful.
func Roles() []Role { return []Role{RoleViewer, RoleEditor, RoleAdmin} }

// Enforcer answers the questions of the role matrix.
type Enforcer struct {
	casbin *casbin.Enforcer
	// decisions holds casbin's answer for every role, domain and action the server asks about,
	// computed once: the policy is embedded and never changes, and casbin's evaluation (an
	// expression evaluated per policy line) cost 70 allocations per request. A question not in it
	// goes to casbin.
	decisions map[decision]bool
}

type decision struct {
	sub, dom string
	act      Action
}

// askedRoles are the subjects the server asks casbin about: the instance roles and the
// workspace roles.
var askedRoles = []string{"member", "instance-admin", string(RoleViewer), string(RoleEditor), string(RoleAdmin)}

// New loads the embedded model and policy.
func New() (*Enforcer, error) {
	m, err := model.NewModelFromString(policy.Model)
	if err != nil {
		return nil, fmt.Errorf("load casbin model: %w", err)
	}
	e, err := casbin.NewEnforcer(m, stringadapter.NewAdapter(policy.Policy))
	if err != nil {
		return nil, fmt.Errorf("load casbin policy: %w", err)
	}
	enf := &Enforcer{casbin: e, decisions: map[decision]bool{}}
	for _, sub := range askedRoles {
		for _, dom := range []string{"instance", "workspace"} {
			for _, act := range []Action{ActionRead, ActionRun, ActionEdit, ActionManage} {
				enf.decisions[decision{sub, dom, act}] = enf.enforce(sub, dom, act)
			}
		}
	}
	return enf, nil
}

func (e *Enforcer) allowed(sub, dom string, act Action) bool {
	if ok, known := e.decisions[decision{sub, dom, act}]; known {
		return ok
	}
	return e.enforce(sub, dom, act)
}

// enforce asks casbin; an error is a refusal.
func (e *Enforcer) enforce(sub, dom string, act Action) bool {
	ok, err := e.casbin.Enforce(sub, dom, string(act))
	return err == nil && ok
}

// CheckOperation is the check made before a handler runs: authentication, the token's scope and,
// for instance operations, the instance role. Workspace operations are checked again by
// CheckWorkspace once the handler knows the workspace.
func (e *Enforcer) CheckOperation(p *Principal, perm Permission) error {
	if err := perm.Valid(); err != nil {
		return apierr.Wrap(err, apierr.Forbidden, "this operation has no valid permission", "")
	}
	if perm.Target == TargetPublic {
		return nil
	}
	if p == nil {
		return apierr.New(apierr.Unauthorized, "authentication required",
			"sign in (cookie sdods_sid) or send Authorization: Bearer amx_…")
	}
	if !p.HasScope(perm.Scope) {
		return apierr.New(apierr.ScopeMissing, fmt.Sprintf("the token lacks scope %s", perm.Scope),
			fmt.Sprintf("create a token with scope %s", perm.Scope))
	}
	if perm.Target == TargetInstance {
		role := "member"
		if p.InstanceAdmin {
			role = "instance-admin"
		}
		if !e.allowed(role, "instance", perm.Action) {
			return apierr.New(apierr.Forbidden, fmt.Sprintf("%s on this instance needs the instance admin role", perm.Action),
				"ask an instance administrator")
		}
	}
	return nil
}

// CheckWorkspace checks the caller's effective role in a workspace (empty when not a member)
// against an action. Instance admins hold the admin role everywhere.
func (e *Enforcer) CheckWorkspace(p *Principal, role Role, act Action) error {
	if p == nil {
		return apierr.New(apierr.Unauthorized, "authentication required", "")
	}
	if p.InstanceAdmin {
		role = RoleAdmin
	}
	if role == "" {
		return apierr.New(apierr.NotFound, "not found", "you are not a member of the workspace that holds it")
	}
	if !e.allowed(string(role), "workspace", act) {
		return apierr.New(apierr.Forbidden, fmt.Sprintf("the %s role may not %s here", role, act),
			"ask a workspace admin for a role that allows it")
	}
	return nil
}
