-- stats_hist_merge as a merge of two histograms in band order (issue 31, item 2): the statistics
-- rollup calls it twice per identity when a run finishes — 20,000 calls for an ingested document of
-- 10,000 test cases — and the SQL version (unnest, GROUP BY, array_agg) planned and ran a query per
-- call, several times slower. Same results: the histograms the rollup stores are in band order with
-- one element per band (they are built with GROUP BY band … ORDER BY band).
CREATE OR REPLACE FUNCTION stats_hist_merge(a stats_bin[], b stats_bin[]) RETURNS stats_bin[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    out stats_bin[] := '{}';
    i   int := 1;
    j   int := 1;
    na  int := coalesce(cardinality(a), 0);
    nb  int := coalesce(cardinality(b), 0);
    x   stats_bin;
    y   stats_bin;
BEGIN
    IF nb = 0 THEN
        RETURN coalesce(a, '{}');
    END IF;
    IF na = 0 THEN
        RETURN b;
    END IF;
    WHILE i <= na OR j <= nb LOOP
        IF j > nb THEN
            out := out || a[i];
            i := i + 1;
        ELSIF i > na THEN
            out := out || b[j];
            j := j + 1;
        ELSE
            x := a[i];
            y := b[j];
            IF x.band < y.band THEN
                out := out || x;
                i := i + 1;
            ELSIF y.band < x.band THEN
                out := out || y;
                j := j + 1;
            ELSE
                out := out || ROW(x.band, x.c + y.c, x.s + y.s)::stats_bin;
                i := i + 1;
                j := j + 1;
            END IF;
        END IF;
    END LOOP;
    RETURN out;
END
$$;
