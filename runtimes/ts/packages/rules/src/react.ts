// useRules: the React hook of the runtime (a separate entry point; React is a peer dependency).
// Given a manifest (or a ManifestClient) and the form state, it returns the findings per field and
// per location and the UI states, evaluating again only when one of its inputs changes.

import { useEffect, useMemo, useRef, useState } from "react";
import type { JSONObject } from "./json.js";
import { RuleSet, type Finding, type Operators, type RulesetRef, type EvaluationResult } from "./rules.js";
import type { ManifestClient, ManifestResult } from "./manifest-client.js";

/** A location of a finding: the members its rule's target names. */
export type View = { page?: string; screen?: string; section?: string; component?: string };

/** Options of useRules. */
export interface UseRulesOptions {
  /** a manifest (JSON text or value); or give client */
  manifest?: unknown;
  /** a manifest client; the hook follows its updates */
  client?: ManifestClient;
  /** the record being edited */
  data: JSONObject | null;
  original?: JSONObject | null;
  actor?: JSONObject | null;
  ctx?: JSONObject | null;
  view?: View | null;
  locale?: string | null;
  /** custom operators the host registers */
  operators?: Operators;
}

/** What useRules returns. */
export interface RulesState {
  /** a manifest is loaded and the findings are current */
  ready: boolean;
  /** the manifest is a cached copy the client could not revalidate */
  stale: boolean;
  /** why the manifest is missing or stale, or a request the shape check refused */
  error: Error | null;
  ruleset: RulesetRef | null;
  findings: Finding[];
  /** findings by field path ("" holds those on the whole record) */
  byField: Record<string, Finding[]>;
  /** findings by location key "page/screen/section/component" (absent levels empty) */
  byLocation: Record<string, Finding[]>;
  states: EvaluationResult["states"];
  missingOperators: string[];
  /** how many evaluations ran (they run only when an input changes) */
  evaluations: number;
}

/** Returns the location key of a finding: the four levels joined by "/". */
export function locationKey(l: View): string {
  return [l.page ?? "", l.screen ?? "", l.section ?? "", l.component ?? ""].join("/");
}

const empty: RulesState = {
  ready: false, stale: false, error: null, ruleset: null, findings: [], byField: {}, byLocation: {}, states: {}, missingOperators: [], evaluations: 0,
};

/** Evaluates the manifest's rules on the form state (see UseRulesOptions). */
export function useRules(o: UseRulesOptions): RulesState {
  const [fromClient, setFromClient] = useState<ManifestResult | null>(() => o.client?.current() ?? null);
  const [clientError, setClientError] = useState<Error | null>(null);
  useEffect(() => {
    if (!o.client) return;
    const c = o.client;
    const off = c.subscribe((r) => {
      setFromClient(r);
      setClientError(r.error ?? null);
    });
    c.get().then(setFromClient, (e: Error) => setClientError(e));
    return () => {
      off();
    };
  }, [o.client]);
  const manifest = o.client ? (fromClient?.manifest ?? null) : o.manifest;
  const loaded = useMemo(() => {
    if (manifest === null || manifest === undefined) return null;
    try {
      return { rs: RuleSet.fromManifest(manifest, { operators: o.operators }), error: null };
    } catch (e) {
      return { rs: null, error: e as Error };
    }
  }, [manifest, o.operators]);
  const count = useRef(0);
  const viewKey = o.view ? locationKey(o.view) : null;
  const result = useMemo(() => {
    if (!loaded?.rs) return null;
    count.current++;
    try {
      const req: JSONObject = { data: o.data };
      if (o.original !== undefined) req.original = o.original;
      if (o.actor !== undefined) req.actor = o.actor;
      if (o.ctx !== undefined) req.ctx = o.ctx;
      if (o.view) req.view = o.view as JSONObject;
      if (o.locale) req.locale = o.locale;
      return { r: loaded.rs.evaluate(req), error: null };
    } catch (e) {
      return { r: null, error: e as Error };
    }
    // the view is compared by its levels, not by identity
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [loaded, o.data, o.original, o.actor, o.ctx, viewKey, o.locale]);
  return useMemo((): RulesState => {
    const stale = o.client ? (fromClient?.stale ?? false) : false;
    const error = clientError ?? loaded?.error ?? result?.error ?? null;
    if (!loaded?.rs || !result?.r) return { ...empty, stale, error, evaluations: count.current, missingOperators: loaded?.rs?.missingOperators ?? [] };
    const byField: Record<string, Finding[]> = {};
    const byLocation: Record<string, Finding[]> = {};
    for (const f of result.r.findings) {
      (byField[f.field ?? ""] ??= []).push(f);
      (byLocation[locationKey(f.location)] ??= []).push(f);
    }
    return {
      ready: true, stale, error, ruleset: result.r.ruleset, findings: result.r.findings, byField, byLocation, states: result.r.states,
      missingOperators: loaded.rs.missingOperators, evaluations: count.current,
    };
  }, [result, loaded, fromClient, clientError, o.client]);
}
