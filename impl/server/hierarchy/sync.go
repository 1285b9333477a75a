// Package hierarchy owns organisations, workspaces and their memberships (Service): the member
// operations and the declarative sync (POST /api/hierarchy/sync: idempotent, all or nothing,
// reporting each change it made) change memberships under one last-admin rule, guardMembers.
package hierarchy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/apierr"
	"github.com/sdods/sdods/impl/server/audit"
	"github.com/sdods/sdods/impl/server/store"
)

// Document is the desired hierarchy.
type Document struct {
	Orgs   []Org
	DryRun bool
	// Prune removes members, workspaces and organisations the document does not name.
	Prune bool
}

// Org is a desired organisation.
type Org struct {
	Slug, Name string
	Members    []Member
	Workspaces []Workspace
}

// Workspace is a desired workspace.
type Workspace struct {
	Slug, Name, Description string
	Members                 []Member
}

// Member is a desired membership of the user with Email.
type Member struct {
	Email, Role string
}

// Change is one change made (or, in a dry run, that would be made).
type Change struct {
	Action string // created, updated, deleted
	Kind   string // org, orgMember, workspace, workspaceMember
	Target string // slug, or slug/email for memberships
	Detail string
}

// Result reports a sync.
type Result struct {
	Changes   []Change
	Unchanged int
	DryRun    bool
}

var errDryRun = errors.New("dry run")

// Sync makes the database match doc in one transaction; its workspace memberships follow the
// same last-admin rule as the member operations.
func (svc *Service) Sync(ctx context.Context, doc Document) (Result, error) {
	st := svc.st
	if err := validate(doc); err != nil {
		return Result{}, err
	}
	res := Result{DryRun: doc.DryRun}
	err := st.WithTx(ctx, func(q *db.Queries) error {
		s := &syncer{ctx: ctx, q: q, res: &res, users: map[string]db.User{}}
		if err := s.resolveUsers(doc); err != nil {
			return err
		}
		if err := s.apply(doc); err != nil {
			return err
		}
		if doc.DryRun {
			return errDryRun
		}
		return audit.Record(ctx, q, audit.Target{Kind: "hierarchy"}, map[string]any{"changes": len(res.Changes), "unchanged": res.Unchanged, "prune": doc.Prune})
	})
	if errors.Is(err, errDryRun) {
		err = st.WithTx(ctx, func(q *db.Queries) error {
			return audit.Record(ctx, q, audit.Target{Kind: "hierarchy"}, map[string]any{"dryRun": true, "changes": len(res.Changes)})
		})
	}
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

var orgRoles = map[string]bool{"member": true, "admin": true}
var workspaceRoles = map[string]bool{"viewer": true, "editor": true, "admin": true}

func validate(doc Document) error {
	var problems []string
	orgSlugs, wsSlugs := map[string]bool{}, map[string]bool{}
	for i, o := range doc.Orgs {
		if orgSlugs[o.Slug] {
			problems = append(problems, fmt.Sprintf("/orgs/%d/slug: %s named twice", i, o.Slug))
		}
		orgSlugs[o.Slug] = true
		seen := map[string]bool{}
		for j, m := range o.Members {
			if !orgRoles[m.Role] {
				problems = append(problems, fmt.Sprintf("/orgs/%d/members/%d/role: an organisation role is member or admin", i, j))
			}
			if seen[strings.ToLower(m.Email)] {
				problems = append(problems, fmt.Sprintf("/orgs/%d/members/%d/email: %s named twice", i, j, m.Email))
			}
			seen[strings.ToLower(m.Email)] = true
		}
		for j, w := range o.Workspaces {
			if wsSlugs[w.Slug] {
				problems = append(problems, fmt.Sprintf("/orgs/%d/workspaces/%d/slug: %s named twice", i, j, w.Slug))
			}
			wsSlugs[w.Slug] = true
			seen := map[string]bool{}
			for k, m := range w.Members {
				if !workspaceRoles[m.Role] {
					problems = append(problems, fmt.Sprintf("/orgs/%d/workspaces/%d/members/%d/role: a workspace role is viewer, editor or admin", i, j, k))
				}
				if seen[strings.ToLower(m.Email)] {
					problems = append(problems, fmt.Sprintf("/orgs/%d/workspaces/%d/members/%d/email: %s named twice", i, j, k, m.Email))
				}
				seen[strings.ToLower(m.Email)] = true
			}
		}
	}
	if len(problems) > 0 {
		return apierr.New(apierr.ValidationFailed, "the hierarchy document is invalid", strings.Join(problems, "; "))
	}
	return nil
}

type syncer struct {
	ctx   context.Context
	q     *db.Queries
	res   *Result
	users map[string]db.User // by lower-case email
}

func (s *syncer) change(action, kind, target, detail string) {
	s.res.Changes = append(s.res.Changes, Change{Action: action, Kind: kind, Target: target, Detail: detail})
}

func (s *syncer) resolveUsers(doc Document) error {
	var unknown []string
	look := func(ms []Member) error {
		for _, m := range ms {
			key := strings.ToLower(m.Email)
			if _, ok := s.users[key]; ok {
				continue
			}
			u, err := s.q.GetUserByEmail(s.ctx, m.Email)
			if store.IsNotFound(err) {
				unknown = append(unknown, m.Email)
				continue
			}
			if err != nil {
				return err
			}
			s.users[key] = u
		}
		return nil
	}
	for _, o := range doc.Orgs {
		if err := look(o.Members); err != nil {
			return err
		}
		for _, w := range o.Workspaces {
			if err := look(w.Members); err != nil {
				return err
			}
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return apierr.New(apierr.ValidationFailed, "the document names unknown users", "create these users first: "+strings.Join(unknown, ", "))
	}
	return nil
}

func (s *syncer) apply(doc Document) error {
	named := map[string]bool{}
	for _, o := range doc.Orgs {
		named[o.Slug] = true
		if err := s.applyOrg(o, doc.Prune); err != nil {
			return err
		}
	}
	if !doc.Prune {
		return nil
	}
	all, err := s.q.ListAllOrgs(s.ctx)
	if err != nil {
		return err
	}
	for _, o := range all {
		if !named[o.Slug] {
			if err := s.q.DeleteOrg(s.ctx, o.ID); err != nil {
				return err
			}
			s.change("deleted", "org", o.Slug, "")
		}
	}
	return nil
}

func (s *syncer) applyOrg(o Org, prune bool) error {
	org, err := s.q.GetOrgBySlug(s.ctx, o.Slug)
	switch {
	case store.IsNotFound(err):
		if org, err = s.q.CreateOrg(s.ctx, db.CreateOrgParams{Slug: o.Slug, Name: o.Name}); err != nil {
			return err
		}
		s.change("created", "org", o.Slug, "")
	case err != nil:
		return err
	case org.Name != o.Name:
		if err := s.q.UpdateOrgName(s.ctx, db.UpdateOrgNameParams{ID: org.ID, Name: o.Name}); err != nil {
			return err
		}
		s.change("updated", "org", o.Slug, "name")
	default:
		s.res.Unchanged++
	}
	current, err := s.q.AllOrgMembers(s.ctx, org.ID)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for _, m := range current {
		have[strings.ToLower(m.Email)] = m.Role
	}
	want := map[string]bool{}
	for _, m := range o.Members {
		key := strings.ToLower(m.Email)
		want[key] = true
		u := s.users[key]
		switch role, ok := have[key]; {
		case !ok:
			s.change("created", "orgMember", o.Slug+"/"+u.Email, m.Role)
		case role != m.Role:
			s.change("updated", "orgMember", o.Slug+"/"+u.Email, role+" → "+m.Role)
		default:
			s.res.Unchanged++
			continue
		}
		if _, err := s.q.UpsertOrgMember(s.ctx, db.UpsertOrgMemberParams{OrgID: org.ID, UserID: u.ID, Role: m.Role}); err != nil {
			return err
		}
	}
	if prune {
		for _, m := range current {
			if !want[strings.ToLower(m.Email)] {
				u, err := s.q.GetUserByEmail(s.ctx, m.Email)
				if err != nil {
					return err
				}
				if _, err := s.q.RemoveOrgMember(s.ctx, db.RemoveOrgMemberParams{OrgID: org.ID, UserID: u.ID}); err != nil {
					return err
				}
				s.change("deleted", "orgMember", o.Slug+"/"+m.Email, "")
			}
		}
	}
	named := map[string]bool{}
	for _, w := range o.Workspaces {
		named[w.Slug] = true
		if err := s.applyWorkspace(org, w, prune); err != nil {
			return err
		}
	}
	if prune {
		all, err := s.q.ListOrgWorkspaces(s.ctx, org.ID)
		if err != nil {
			return err
		}
		for _, w := range all {
			if !named[w.Slug] {
				if err := s.q.DeleteWorkspace(s.ctx, w.ID); err != nil {
					return err
				}
				s.change("deleted", "workspace", w.Slug, "")
			}
		}
	}
	return nil
}

func (s *syncer) applyWorkspace(org db.Org, w Workspace, prune bool) error {
	ws, err := s.q.GetWorkspaceBySlug(s.ctx, w.Slug)
	var id uuid.UUID
	switch {
	case store.IsNotFound(err):
		created, err := s.q.CreateWorkspace(s.ctx, db.CreateWorkspaceParams{OrgID: org.ID, Slug: w.Slug, Name: w.Name, Description: w.Description})
		if err != nil {
			return err
		}
		id = created.ID
		s.change("created", "workspace", w.Slug, "")
	case err != nil:
		return err
	case ws.OrgID != org.ID:
		return apierr.New(apierr.Conflict, fmt.Sprintf("workspace %s belongs to organisation %s", w.Slug, ws.OrgSlug),
			"workspace slugs are unique across organisations; rename it in the document")
	case ws.Name != w.Name || ws.Description != w.Description:
		id = ws.ID
		if err := s.q.UpdateWorkspace(s.ctx, db.UpdateWorkspaceParams{ID: ws.ID, Name: w.Name, Description: w.Description}); err != nil {
			return err
		}
		s.change("updated", "workspace", w.Slug, "name or description")
	default:
		id = ws.ID
		s.res.Unchanged++
	}
	// The members change under the one last-admin rule of the member operations (guardMembers).
	return guardMembers(s.ctx, s.q, id, w.Slug, func() error { return s.applyWorkspaceMembers(id, w, prune) })
}

func (s *syncer) applyWorkspaceMembers(id uuid.UUID, w Workspace, prune bool) error {
	current, err := s.q.AllWorkspaceMembers(s.ctx, id)
	if err != nil {
		return err
	}
	have := map[string]string{}
	for _, m := range current {
		have[strings.ToLower(m.Email)] = m.Role
	}
	want := map[string]bool{}
	for _, m := range w.Members {
		key := strings.ToLower(m.Email)
		want[key] = true
		u := s.users[key]
		switch role, ok := have[key]; {
		case !ok:
			s.change("created", "workspaceMember", w.Slug+"/"+u.Email, m.Role)
		case role != m.Role:
			s.change("updated", "workspaceMember", w.Slug+"/"+u.Email, role+" → "+m.Role)
		default:
			s.res.Unchanged++
			continue
		}
		if _, err := s.q.UpsertWorkspaceMember(s.ctx, db.UpsertWorkspaceMemberParams{WorkspaceID: id, UserID: u.ID, Role: m.Role}); err != nil {
			return err
		}
	}
	if prune {
		for _, m := range current {
			if !want[strings.ToLower(m.Email)] {
				u, err := s.q.GetUserByEmail(s.ctx, m.Email)
				if err != nil {
					return err
				}
				if _, err := s.q.RemoveWorkspaceMember(s.ctx, db.RemoveWorkspaceMemberParams{WorkspaceID: id, UserID: u.ID}); err != nil {
					return err
				}
				s.change("deleted", "workspaceMember", w.Slug+"/"+m.Email, "")
			}
		}
	}
	return nil
}
