-- The review inbox (GET /api/proposals) as two lists read in their order and stopped at the page,
-- merged by the service: the proposals of a project by status (or all of them) and its visual
-- checks, each newest first. inbox_items, their union, still answers the look-up of one item.
DROP INDEX proposals_project_idx;
CREATE INDEX proposals_project_idx ON proposals (project_id, created_at DESC, id DESC);
CREATE INDEX proposals_project_status_idx ON proposals (project_id, status, created_at DESC, id DESC);
CREATE INDEX visual_checks_inbox_idx ON visual_checks (project_id, created_at DESC, id DESC)
    WHERE status IN ('failed', 'pending', 'accepted');

DROP VIEW inbox_items;
CREATE VIEW inbox_proposals AS
SELECT pr.id, pr.project_id, pr.job_id, pr.kind, pr.status, pr.title, pr.target, pr.diff, pr.evidence, pr.confidence,
       pr.decided_by, pr.decided_at, pr.reason, pr.created_at, pr.updated_at, p.slug AS project_slug, p.workspace_id
FROM proposals pr JOIN projects p ON p.id = pr.project_id;
CREATE VIEW inbox_visual_checks AS
SELECT c.id, c.project_id, NULL::uuid AS job_id, 'baseline_update'::text AS kind,
       CASE WHEN c.status = 'accepted' THEN 'accepted' WHEN rj.check_id IS NOT NULL THEN 'rejected' ELSE 'pending' END AS status,
       ('visual baseline ' || c.name || ' (' || c.browser || ', ' || c.viewport || ')')::text AS title,
       jsonb_build_object('baseline', c.name, 'runId', c.run_id) AS target,
       NULL::text AS diff,
       jsonb_build_object('visualCheckId', c.id, 'check', c.status, 'browser', c.browser, 'viewport', c.viewport, 'selector', c.selector,
                          'mismatchPixels', c.mismatch_pixels, 'mismatchRatio', c.mismatch_ratio, 'threshold', c.threshold,
                          'sizeMismatch', c.size_mismatch, 'actualArtifactId', c.actual_artifact_id,
                          'expectedArtifactId', c.expected_artifact_id, 'diffArtifactId', c.diff_artifact_id) AS evidence,
       -- How sure the difference is real: a new baseline (nothing to compare) is a coin toss.
       (CASE WHEN c.mismatch_pixels IS NULL THEN 0.5 ELSE least(1, 0.5 + c.mismatch_ratio * 5) END)::real AS confidence,
       coalesce(c.accepted_by, rj.decided_by) AS decided_by, coalesce(c.accepted_at, rj.decided_at) AS decided_at, rj.reason,
       c.created_at, coalesce(c.accepted_at, rj.decided_at, c.created_at) AS updated_at, p.slug AS project_slug, p.workspace_id
FROM visual_checks c JOIN projects p ON p.id = c.project_id LEFT JOIN visual_check_rejections rj ON rj.check_id = c.id
WHERE c.status IN ('failed', 'pending', 'accepted');
CREATE VIEW inbox_items AS
SELECT * FROM inbox_proposals
UNION ALL
SELECT * FROM inbox_visual_checks;
