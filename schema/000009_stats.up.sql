-- Statistics (docs/stats.md). A scenario's identity across runs is its feature path, its name and,
-- for a Scenario Outline, its example row; with the run's project it names the same scenario in
-- runs of any label, trigger, schedule or source (executed or ingested). A rename is a new identity.
-- Identity and failure signature are generated columns, so they are current in the same statement
-- that writes a result and never computed by a loop over results.

-- stats_mask replaces what differs between occurrences of the same failure (UUIDs, URLs,
-- temporary paths, hexadecimal, numbers) with placeholders, so such failures group together.
CREATE FUNCTION stats_mask(s text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
        left(coalesce(s, ''), 2000),
        '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>', 'g'),
        '[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"''<>]+', '<url>', 'g'),
        '(/tmp|/var/folders|/private/var|[A-Za-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp)[^\s"''<>]*', '<path>', 'g'),
        '\m(0x)?[0-9a-fA-F]*[0-9][0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\M|\m(0x)?[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*[0-9][0-9a-fA-F]*\M', '<hex>', 'g'),
        '[0-9]+', '<n>', 'g')
$$;

-- stats_failing_step is the first failed step of a scenario's step list, or null.
CREATE FUNCTION stats_failing_step(steps jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT s FROM jsonb_array_elements(CASE WHEN jsonb_typeof(steps) = 'array' THEN steps ELSE '[]'::jsonb END) s
    WHERE s->>'status' IN ('failed', 'undefined', 'ambiguous') LIMIT 1
$$;

-- stats_signature is a failure's normalised signature: the masked message, the failing step's
-- masked keyword and text and, for an HTTP step, the method and the status it answered.
CREATE FUNCTION stats_signature(err jsonb, steps jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH f AS (SELECT stats_failing_step(steps) AS st,
                      coalesce(err->>'message', stats_failing_step(steps)->'error'->>'message', '') AS msg)
    SELECT stats_mask(split_part(msg, E'\n', 1))
        || E' \u00a6 ' || stats_mask(coalesce(st->>'keyword', '') || coalesce(st->>'text', ''))
        || coalesce(E' \u00a6 ' || (regexp_match(msg, '(?:^|[^A-Za-z])(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|TRACE|CONNECT) \S+ answered ([0-9]{3})'))[1]
                    || ' ' || (regexp_match(msg, '(?:^|[^A-Za-z])(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|TRACE|CONNECT) \S+ answered ([0-9]{3})'))[2], '')
    FROM f
$$;

-- stats_locator is the element a browser step acts on (its selector argument), or null.
CREATE FUNCTION stats_locator(step_text text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(
        (regexp_match(step_text, '^I click (?:on )?"([^"]*)"'))[1],
        (regexp_match(step_text, '^I fill "([^"]*)" with '))[1],
        (regexp_match(step_text, '^I select "[^"]*" (?:in|from) "([^"]*)"'))[1],
        (regexp_match(step_text, '^I should see "[^"]*" in "([^"]*)"'))[1],
        (regexp_match(step_text, '^I wait for "([^"]*)"'))[1])
$$;

ALTER TABLE run_scenarios
    ADD COLUMN identity text GENERATED ALWAYS AS (
        md5(feature_path || E'\x1f' || name || E'\x1f' || coalesce(example_row::text, ''))) STORED,
    ADD COLUMN failure_signature text GENERATED ALWAYS AS (
        CASE WHEN status IN ('failed', 'undefined', 'ambiguous') THEN stats_signature(error, steps) END) STORED,
    -- Heals recorded on the result's steps: heal statistics only expand the few results that have some.
    ADD COLUMN heals integer GENERATED ALWAYS AS (
        coalesce(jsonb_array_length(jsonb_path_query_array(steps, '$[*].heals[*]')), 0)) STORED;

-- Statistics select runs by project and the time a run happened (started, else created).
CREATE INDEX runs_stats_idx ON runs (project_id, (coalesce(started_at, created_at)));
CREATE INDEX run_scenarios_identity_idx ON run_scenarios (identity, run_id);
CREATE INDEX run_scenarios_heals_idx ON run_scenarios (run_id) WHERE heals > 0;
CREATE INDEX run_scenarios_signature_idx ON run_scenarios (failure_signature) WHERE failure_signature IS NOT NULL;
