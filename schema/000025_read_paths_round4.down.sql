DROP VIEW inbox_items;
DROP VIEW inbox_visual_checks;
DROP VIEW inbox_proposals;
-- The review inbox (GET /api/proposals): agent proposals, and visual checks as baseline updates.
CREATE VIEW inbox_items AS
SELECT pr.id, pr.project_id, pr.job_id, pr.kind, pr.status, pr.title, pr.target, pr.diff, pr.evidence, pr.confidence,
       pr.decided_by, pr.decided_at, pr.reason, pr.created_at, pr.updated_at, p.slug AS project_slug, p.workspace_id
FROM proposals pr JOIN projects p ON p.id = pr.project_id
UNION ALL
SELECT c.id, c.project_id, NULL::uuid, 'baseline_update',
       CASE WHEN c.status = 'accepted' THEN 'accepted' WHEN rj.check_id IS NOT NULL THEN 'rejected' ELSE 'pending' END,
       'visual baseline ' || c.name || ' (' || c.browser || ', ' || c.viewport || ')',
       jsonb_build_object('baseline', c.name, 'runId', c.run_id),
       NULL::text,
       jsonb_build_object('visualCheckId', c.id, 'check', c.status, 'browser', c.browser, 'viewport', c.viewport, 'selector', c.selector,
                          'mismatchPixels', c.mismatch_pixels, 'mismatchRatio', c.mismatch_ratio, 'threshold', c.threshold,
                          'sizeMismatch', c.size_mismatch, 'actualArtifactId', c.actual_artifact_id,
                          'expectedArtifactId', c.expected_artifact_id, 'diffArtifactId', c.diff_artifact_id),
       -- How sure the difference is real: a new baseline (nothing to compare) is a coin toss.
       (CASE WHEN c.mismatch_pixels IS NULL THEN 0.5 ELSE least(1, 0.5 + c.mismatch_ratio * 5) END)::real,
       coalesce(c.accepted_by, rj.decided_by), coalesce(c.accepted_at, rj.decided_at), rj.reason, c.created_at,
       coalesce(c.accepted_at, rj.decided_at, c.created_at), p.slug, p.workspace_id
FROM visual_checks c JOIN projects p ON p.id = c.project_id LEFT JOIN visual_check_rejections rj ON rj.check_id = c.id
WHERE c.status IN ('failed', 'pending', 'accepted');
DROP INDEX visual_checks_inbox_idx;
DROP INDEX proposals_project_status_idx;
DROP INDEX proposals_project_idx;
CREATE INDEX proposals_project_idx ON proposals (project_id, created_at DESC);
