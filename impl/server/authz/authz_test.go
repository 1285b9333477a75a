package authz_test

import (
	"errors"
	"testing"

	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/authz"
)

func mustEnforcer(tb testing.TB) *authz.Enforcer {
	tb.Helper()
	e, err := authz.New()
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func code(err error) apierr.Code {
	if err == nil {
		return ""
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		return "not an apierr"
	}
	return e.Code
}

func TestCheckWorkspaceRoleMatrix(t *testing.T) {
	e := mustEnforcer(t)
	session := &authz.Principal{UserID: "u", Method: authz.MethodSession}
	want := map[authz.Role]map[authz.Action]bool{
		authz.RoleViewer: {authz.ActionRead: true},
		authz.RoleEditor: {authz.ActionRead: true, authz.ActionRun: true, authz.ActionEdit: true},
		authz.RoleAdmin:  {authz.ActionRead: true, authz.ActionRun: true, authz.ActionEdit: true, authz.ActionManage: true},
	}
	for _, role := range authz.Roles() {
		for _, act := range []authz.Action{authz.ActionRead, authz.ActionRun, authz.ActionEdit, authz.ActionManage} {
			t.Run(string(role)+"/"+string(act), func(t *testing.T) {
				err := e.CheckWorkspace(session, role, act)
				if got := err == nil; got != want[role][act] {
					t.Fatalf("allowed = %v, want %v (err %v)", got, want[role][act], err)
				}
				if err != nil && code(err) != apierr.Forbidden {
					t.Fatalf("code = %s, want forbidden", code(err))
				}
			})
		}
	}
	if c := code(e.CheckWorkspace(session, "", authz.ActionRead)); c != apierr.NotFound {
		t.Errorf("non-member: code %s, want not_found (a workspace one cannot see does not exist)", c)
	}
	if err := e.CheckWorkspace(&authz.Principal{InstanceAdmin: true}, "", authz.ActionManage); err != nil {
		t.Errorf("instance admin: %v", err)
	}
	if c := code(e.CheckWorkspace(nil, authz.RoleAdmin, authz.ActionRead)); c != apierr.Unauthorized {
		t.Errorf("anonymous: code %s", c)
	}
	if c := code(e.CheckWorkspace(session, "owner", authz.ActionRead)); c != apierr.Forbidden {
		t.Errorf("unknown role: code %s, want forbidden (fail closed)", c)
	}
}

func TestCheckOperation(t *testing.T) {
	e := mustEnforcer(t)
	token := &authz.Principal{Method: authz.MethodToken, Scopes: []string{"runs:read"}}
	member := &authz.Principal{Method: authz.MethodSession}
	admin := &authz.Principal{Method: authz.MethodSession, InstanceAdmin: true}
	cases := []struct {
		name string
		p    *authz.Principal
		perm authz.Permission
		want apierr.Code
	}{
		{"public anonymous", nil, authz.Permission{Target: authz.TargetPublic}, ""},
		{"anonymous", nil, authz.Permission{Target: authz.TargetWorkspace, Action: authz.ActionRead, Scope: "runs:read"}, apierr.Unauthorized},
		{"token with scope", token, authz.Permission{Target: authz.TargetWorkspace, Action: authz.ActionRead, Scope: "runs:read"}, ""},
		{"token without scope", token, authz.Permission{Target: authz.TargetWorkspace, Action: authz.ActionRun, Scope: "runs:write"}, apierr.ScopeMissing},
		{"session ignores scopes", member, authz.Permission{Target: authz.TargetWorkspace, Action: authz.ActionRun, Scope: "runs:write"}, ""},
		{"member reads instance", member, authz.Permission{Target: authz.TargetInstance, Action: authz.ActionRead, Scope: "admin:read"}, ""},
		{"member manages instance", member, authz.Permission{Target: authz.TargetInstance, Action: authz.ActionManage, Scope: "admin:write"}, apierr.Forbidden},
		{"admin manages instance", admin, authz.Permission{Target: authz.TargetInstance, Action: authz.ActionManage, Scope: "admin:write"}, ""},
		{"self", member, authz.Permission{Target: authz.TargetSelf, Action: authz.ActionEdit, Scope: "tokens:write"}, ""},
		{"unknown target fails closed", admin, authz.Permission{Target: "everyone", Action: authz.ActionRead, Scope: "x"}, apierr.Forbidden},
		{"missing scope fails closed", admin, authz.Permission{Target: authz.TargetInstance, Action: authz.ActionRead}, apierr.Forbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := code(e.CheckOperation(tc.p, tc.perm)); got != tc.want {
				t.Fatalf("code = %q, want %q", got, tc.want)
			}
		})
	}
}
