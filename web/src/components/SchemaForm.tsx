// A form generated from a JSON Schema (the `inputSchema` of an agent kind): one labelled control
// per property — text for strings, a select for enums, a number field for numbers and integers, a
// checkbox for booleans, a list (one item a line) for arrays of strings — with the schema's
// description as the hint, required fields marked, and the values checked against the schema
// before anything is sent (the server checks again).

/** The part of JSON Schema the form understands; anything else is shown as a raw JSON field. */
export type JsonSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
};

/** What the form holds per property: the text typed (numbers and JSON as typed), a boolean, or the lines of a list. */
export type FormValues = Record<string, string | boolean>;

type FieldKind = "string" | "number" | "integer" | "boolean" | "enum" | "strings" | "json";

function typeOf(s: JsonSchema): string | undefined {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== "null");
  return s.type;
}

/** The control a property gets. */
export function fieldKind(s: JsonSchema): FieldKind {
  if (Array.isArray(s.enum) && s.enum.length > 0) return "enum";
  const t = typeOf(s);
  if (t === "string") return "string";
  if (t === "integer") return "integer";
  if (t === "number") return "number";
  if (t === "boolean") return "boolean";
  if (t === "array" && s.items && typeOf(s.items) === "string" && !s.items.enum) return "strings";
  return "json";
}

/** The form's starting values: each property's default, or empty. */
export function initialValues(schema: JsonSchema): FormValues {
  const v: FormValues = {};
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const k = fieldKind(p);
    const d = p.default;
    if (k === "boolean") v[name] = typeof d === "boolean" ? d : false;
    else if (k === "strings") v[name] = Array.isArray(d) ? d.join("\n") : "";
    else if (k === "json") v[name] = d === undefined ? "" : JSON.stringify(d);
    else v[name] = d === undefined || d === null ? "" : String(d);
  }
  return v;
}

function lines(s: string) {
  return s
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

/**
 * Checks the values against the schema and converts them to the input object: empty optional
 * fields are left out (the server applies the default), a boolean is sent only when it is required
 * or differs from its default. Returns the messages by property (empty when the input fits).
 */
export function toInput(schema: JsonSchema, values: FormValues): { input: Record<string, unknown>; errors: Record<string, string> } {
  const input: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const k = fieldKind(p);
    const raw = values[name];
    if (k === "boolean") {
      const b = raw === true;
      if (required.has(name) || b !== (p.default === true)) input[name] = b;
      continue;
    }
    const text = typeof raw === "string" ? raw : "";
    if (text.trim() === "") {
      if (required.has(name)) errors[name] = "is required";
      continue;
    }
    switch (k) {
      case "integer":
      case "number": {
        const n = Number(text.trim());
        if (!Number.isFinite(n)) {
          errors[name] = "must be a number";
          break;
        }
        if (k === "integer" && !Number.isInteger(n)) {
          errors[name] = "must be a whole number";
          break;
        }
        if (p.minimum !== undefined && n < p.minimum) errors[name] = `must be at least ${p.minimum}`;
        else if (p.maximum !== undefined && n > p.maximum) errors[name] = `must be at most ${p.maximum}`;
        else if (p.exclusiveMinimum !== undefined && n <= p.exclusiveMinimum) errors[name] = `must be more than ${p.exclusiveMinimum}`;
        else if (p.exclusiveMaximum !== undefined && n >= p.exclusiveMaximum) errors[name] = `must be less than ${p.exclusiveMaximum}`;
        else input[name] = n;
        break;
      }
      case "enum": {
        const opt = (p.enum ?? []).find((e) => String(e) === text);
        if (opt === undefined) errors[name] = "must be one of " + (p.enum ?? []).map(String).join(", ");
        else input[name] = opt;
        break;
      }
      case "string": {
        const e = checkString(p, text);
        if (e) errors[name] = e;
        else input[name] = text;
        break;
      }
      case "strings": {
        const items = lines(text);
        if (p.minItems !== undefined && items.length < p.minItems) {
          errors[name] = `needs at least ${p.minItems} item(s)`;
          break;
        }
        if (p.maxItems !== undefined && items.length > p.maxItems) {
          errors[name] = `takes at most ${p.maxItems} item(s)`;
          break;
        }
        const bad = items.map((it) => [it, checkString(p.items ?? {}, it)] as const).find(([, e]) => e);
        if (bad) errors[name] = `"${bad[0]}" ${bad[1]}`;
        else input[name] = items;
        break;
      }
      default: {
        try {
          input[name] = JSON.parse(text);
        } catch {
          errors[name] = "must be JSON";
        }
      }
    }
  }
  return { input, errors };
}

function checkString(p: JsonSchema, s: string): string | undefined {
  if (p.minLength !== undefined && s.length < p.minLength) return `must be at least ${p.minLength} character(s)`;
  if (p.maxLength !== undefined && s.length > p.maxLength) return `must be at most ${p.maxLength} characters`;
  if (p.pattern) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(p.pattern, "u");
    } catch {
      re = undefined; // a pattern this browser cannot compile is left to the server
    }
    if (re && !re.test(s)) return `must match ${p.pattern}`;
  }
  if (p.format === "uuid" && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)) return "must be an id (a UUID)";
  return undefined;
}

function label(name: string, p: JsonSchema) {
  if (p.title) return p.title;
  // minOccurrences → Min occurrences
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1).toLowerCase();
}

/**
 * The generated controls of a schema. `errors` are shown under their fields (and the field is
 * marked invalid); `idPrefix` keeps ids unique when two forms are on a page.
 */
export function SchemaFields({
  schema,
  values,
  onChange,
  errors,
  idPrefix,
}: {
  schema: JsonSchema;
  values: FormValues;
  onChange: (v: FormValues) => void;
  errors: Record<string, string>;
  idPrefix: string;
}) {
  const props = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  if (props.length === 0) return <p className="muted">This kind takes no input.</p>;
  return (
    <>
      {props.map(([name, p]) => {
        const id = `${idPrefix}-${name}`;
        const k = fieldKind(p);
        const err = errors[name];
        const hintParts = [p.description, k === "strings" ? "one a line" : "", range(p)].filter(Boolean);
        const described = [hintParts.length ? id + "-hint" : "", err ? id + "-err" : ""].filter(Boolean).join(" ") || undefined;
        const common = { id, name, "aria-describedby": described, "aria-invalid": err ? true : undefined, "aria-required": required.has(name) || undefined };
        const set = (v: string | boolean) => onChange({ ...values, [name]: v });
        const v = values[name];
        let control;
        if (k === "boolean") {
          control = <input type="checkbox" {...common} checked={v === true} onChange={(e) => set(e.target.checked)} />;
        } else if (k === "enum") {
          control = (
            <select {...common} value={typeof v === "string" ? v : ""} onChange={(e) => set(e.target.value)}>
              <option value="">{required.has(name) ? "Choose…" : "(default)"}</option>
              {(p.enum ?? []).map((o) => (
                <option key={String(o)} value={String(o)}>
                  {String(o)}
                </option>
              ))}
            </select>
          );
        } else if (k === "strings" || k === "json") {
          control = <textarea {...common} rows={3} value={typeof v === "string" ? v : ""} onChange={(e) => set(e.target.value)} />;
        } else {
          control = (
            <input
              type={k === "string" ? "text" : "number"}
              step={k === "integer" ? 1 : "any"}
              {...common}
              value={typeof v === "string" ? v : ""}
              onChange={(e) => set(e.target.value)}
            />
          );
        }
        return (
          <div className={"field" + (k === "boolean" ? " field-check" : "")} key={name}>
            <label className="field-label" htmlFor={id}>
              {label(name, p)}
              {required.has(name) ? (
                <>
                  {" "}
                  <span aria-hidden="true">*</span>
                  <span className="sr-only">(required)</span>
                </>
              ) : null}
            </label>
            {control}
            {hintParts.length ? (
              <span className="field-hint" id={id + "-hint"}>
                {hintParts.join("; ")}
              </span>
            ) : null}
            {err ? (
              <span className="field-error" id={id + "-err"} role="alert">
                {label(name, p)} {err}
              </span>
            ) : null}
          </div>
        );
      })}
    </>
  );
}

function range(p: JsonSchema) {
  if (p.minimum !== undefined && p.maximum !== undefined) return `${p.minimum} to ${p.maximum}`;
  if (p.minimum !== undefined) return `at least ${p.minimum}`;
  if (p.maximum !== undefined) return `at most ${p.maximum}`;
  return "";
}
