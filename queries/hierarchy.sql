-- name: CreateOrg :one
INSERT INTO orgs (slug, name) VALUES ($1, $2) RETURNING *;

-- name: GetOrgBySlug :one
SELECT * FROM orgs WHERE slug = $1;

-- name: UpdateOrgName :exec
UPDATE orgs SET name = $2, updated_at = now() WHERE id = $1;

-- name: DeleteOrg :exec
DELETE FROM orgs WHERE id = $1;

-- name: ListAllOrgs :many
SELECT * FROM orgs ORDER BY slug;

-- name: ListOrgs :many
-- The orgs a user sees (all of them for an instance admin), with their counts.
SELECT o.*,
       (SELECT count(*) FROM org_members m WHERE m.org_id = o.id)::int AS member_count,
       (SELECT count(*) FROM workspaces w WHERE w.org_id = o.id)::int AS workspace_count
FROM orgs o
WHERE (sqlc.arg('all_orgs')::boolean
       OR EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = o.id AND m.user_id = sqlc.arg('user_id'))
       OR EXISTS (SELECT 1 FROM workspaces w JOIN workspace_members wm ON wm.workspace_id = w.id
                  WHERE w.org_id = o.id AND wm.user_id = sqlc.arg('user_id')))
  AND (sqlc.narg('after_slug')::text IS NULL OR o.slug > sqlc.narg('after_slug')::text)
  AND (sqlc.narg('query')::text IS NULL OR o.slug ILIKE '%' || sqlc.narg('query')::text || '%'
       OR o.name ILIKE '%' || sqlc.narg('query')::text || '%')
ORDER BY o.slug
LIMIT sqlc.arg('row_limit');

-- name: ListOrgMembers :many
SELECT m.role, m.created_at, sqlc.embed(u)
FROM org_members m JOIN users u ON u.id = m.user_id
WHERE m.org_id = sqlc.arg('org_id')
  AND (sqlc.narg('after_email')::text IS NULL OR lower(u.email) > lower(sqlc.narg('after_email')::text))
ORDER BY lower(u.email)
LIMIT sqlc.arg('row_limit');

-- name: AllOrgMembers :many
SELECT m.role, u.email FROM org_members m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1;

-- name: UpsertOrgMember :one
INSERT INTO org_members (org_id, user_id, role) VALUES ($1, $2, $3)
ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role
RETURNING *;

-- name: RemoveOrgMember :execrows
DELETE FROM org_members WHERE org_id = $1 AND user_id = $2;

-- name: CreateWorkspace :one
INSERT INTO workspaces (org_id, slug, name, description) VALUES ($1, $2, $3, $4) RETURNING *;

-- name: UpdateWorkspace :exec
UPDATE workspaces SET name = $2, description = $3, updated_at = now() WHERE id = $1;

-- name: DeleteWorkspace :exec
DELETE FROM workspaces WHERE id = $1;

-- name: ListOrgWorkspaces :many
SELECT * FROM workspaces WHERE org_id = $1 ORDER BY slug;

-- name: GetWorkspaceBySlug :one
SELECT w.*, o.slug AS org_slug, o.name AS org_name
FROM workspaces w JOIN orgs o ON o.id = w.org_id
WHERE w.slug = $1;

-- name: EffectiveWorkspaceRole :one
-- The user's role in a workspace: the explicit membership or, for an org admin, admin; the higher
-- of the two. Empty when the user has neither.
SELECT coalesce((
    SELECT CASE
        WHEN 'admin' IN (wm.role, om.role) THEN 'admin'
        ELSE coalesce(wm.role, '')
    END
    FROM workspaces w
    LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = sqlc.arg('user_id')
    LEFT JOIN org_members om ON om.org_id = w.org_id AND om.user_id = sqlc.arg('user_id')
    WHERE w.id = sqlc.arg('workspace_id')), '')::text AS role;

-- name: ListWorkspacesForUser :many
-- The workspaces a user sees with the user's effective role and the counts.
SELECT w.*, o.slug AS org_slug, o.name AS org_name,
       CASE WHEN sqlc.arg('instance_admin')::boolean OR 'admin' IN (wm.role, om.role) THEN 'admin'
            ELSE coalesce(wm.role, '') END::text AS role,
       (SELECT count(*) FROM workspace_members x WHERE x.workspace_id = w.id)::int AS member_count,
       (SELECT count(*) FROM projects p WHERE p.workspace_id = w.id)::int AS project_count
FROM workspaces w
JOIN orgs o ON o.id = w.org_id
LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = sqlc.arg('user_id')
LEFT JOIN org_members om ON om.org_id = w.org_id AND om.user_id = sqlc.arg('user_id')
WHERE (sqlc.arg('instance_admin')::boolean OR wm.user_id IS NOT NULL OR om.role = 'admin')
  AND (sqlc.narg('org_slug')::text IS NULL OR o.slug = sqlc.narg('org_slug')::text)
  AND (sqlc.narg('after_slug')::text IS NULL OR w.slug > sqlc.narg('after_slug')::text)
  AND (sqlc.narg('query')::text IS NULL OR w.slug ILIKE '%' || sqlc.narg('query')::text || '%'
       OR w.name ILIKE '%' || sqlc.narg('query')::text || '%')
ORDER BY w.slug
LIMIT sqlc.arg('row_limit');

-- name: WorkspaceCounts :one
SELECT (SELECT count(*) FROM workspace_members m WHERE m.workspace_id = $1)::int AS member_count,
       (SELECT count(*) FROM projects p WHERE p.workspace_id = $1)::int AS project_count;

-- name: ListWorkspaceMembers :many
SELECT m.role, m.created_at, m.updated_at, sqlc.embed(u)
FROM workspace_members m JOIN users u ON u.id = m.user_id
WHERE m.workspace_id = sqlc.arg('workspace_id')
  AND (sqlc.narg('role')::text IS NULL OR m.role = sqlc.narg('role')::text)
  AND (sqlc.narg('after_email')::text IS NULL OR lower(u.email) > lower(sqlc.narg('after_email')::text))
ORDER BY lower(u.email)
LIMIT sqlc.arg('row_limit');

-- name: AllWorkspaceMembers :many
SELECT m.role, u.email FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1;

-- name: GetWorkspaceMember :one
SELECT m.role, m.created_at, m.updated_at, sqlc.embed(u)
FROM workspace_members m JOIN users u ON u.id = m.user_id
WHERE m.workspace_id = $1 AND m.user_id = $2;

-- name: AddWorkspaceMember :one
INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3) RETURNING *;

-- name: UpsertWorkspaceMember :one
INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)
ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now()
RETURNING *;

-- name: UpdateWorkspaceMember :execrows
UPDATE workspace_members SET role = $3, updated_at = now() WHERE workspace_id = $1 AND user_id = $2;

-- name: RemoveWorkspaceMember :execrows
DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2;

-- name: CountWorkspaceAdmins :one
SELECT count(*)::int FROM workspace_members WHERE workspace_id = $1 AND role = 'admin';

-- name: LockWorkspaceMembers :exec
-- Serialises the transactions that change a workspace's members, so that the last-admin check of
-- one sees the changes of the others.
SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE;
