-- jsonb refuses the escape \u0000, which json keeps (a NUL in a log line): each becomes U+FFFD. The
-- lookbehind leaves an escaped backslash followed by "u0000" alone.
ALTER TABLE run_events ALTER COLUMN data TYPE jsonb
    USING regexp_replace(data::text, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g')::jsonb;
