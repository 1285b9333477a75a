CREATE OR REPLACE FUNCTION stats_hist_merge(a stats_bin[], b stats_bin[]) RETURNS stats_bin[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(ROW(band, c, s)::stats_bin ORDER BY band), '{}')
    FROM (SELECT band, sum(c)::bigint AS c, sum(s) AS s
          FROM (SELECT * FROM unnest(coalesce(a, '{}')) UNION ALL SELECT * FROM unnest(coalesce(b, '{}'))) e
          GROUP BY band) g
$$;
