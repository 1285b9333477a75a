// Requests node:http refuses before a handler runs (clientError), or accepts where the Go rule
// server refuses (HTTP/0.9 and versions other than 1.x, two Host headers, no Host header in
// HTTP/1.1): each is answered with the one error body of openapi/rules.yaml and a message that
// names the problem, worded as the Go server words it (impl/rules/ruleserver/listener.go).

/** A refusal: the HTTP status, the code of openapi/rules.yaml, the message and the hint. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
  hint: string;
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  431: "Request Header Fields Too Large",
  501: "Not Implemented",
  505: "HTTP Version Not Supported",
};

/** The raw answer to a refused request: the error body, then the connection closes. */
export function refusalResponse(r: Refusal): string {
  const body = JSON.stringify({ error: { code: r.code, message: r.message, hint: r.hint } }) + "\n";
  return `HTTP/1.1 ${r.status} ${REASONS[r.status] ?? "Error"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** A string quoted for a message, cut at 80 bytes (the rest is the client's own input). */
export function quote(s: string): string {
  const b = Buffer.from(s, "latin1");
  const cut = b.length > 80 ? b.subarray(0, 80).toString("latin1") + "…" : s;
  return JSON.stringify(cut);
}

const badRequest = (message: string, hint: string): Refusal => ({ status: 400, code: "BAD_REQUEST", message, hint });

/**
 * The refusal of a request head node:http could not parse (its error code, and the bytes it
 * read: rawPacket, which holds the head when it came in one piece).
 */
export function clientErrorRefusal(errorCode: string | undefined, raw: Buffer | undefined): Refusal {
  if (errorCode === "HPE_HEADER_OVERFLOW")
    return { status: 431, code: "HEADERS_TOO_LARGE", message: "the request line and headers exceed 64 KiB", hint: "send fewer or shorter headers" };
  const p = headProblem(raw ?? Buffer.alloc(0));
  if (p) return p;
  if (errorCode === "HPE_INVALID_TRANSFER_ENCODING" || errorCode === "HPE_UNEXPECTED_CONTENT_LENGTH" && /transfer-encoding/i.test(raw?.toString("latin1") ?? ""))
    return { status: 501, code: "TRANSFER_ENCODING_UNSUPPORTED", message: "the request's Transfer-Encoding is not supported", hint: "send the body with Content-Length or Transfer-Encoding: chunked" };
  if (errorCode === "HPE_INVALID_VERSION")
    return { status: 505, code: "HTTP_VERSION_NOT_SUPPORTED", message: "the request's HTTP version is not supported", hint: "send HTTP/1.1 (or HTTP/1.0)" };
  return badRequest("the request line or a header could not be parsed", "send a request line 'METHOD target HTTP/1.1' and headers 'Name: value' as RFC 9112 defines");
}

/** What is wrong with a request head, in the Go server's order of checks, or null. */
export function headProblem(read: Buffer): Refusal | null {
  const text = read.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  const lines = (end < 0 ? text : text.slice(0, end)).split("\r\n");
  const first = lines[0];
  const sp1 = first.indexOf(" ");
  const sp2 = sp1 < 0 ? -1 : first.indexOf(" ", sp1 + 1);
  if (sp1 < 0 || sp2 < 0) {
    if (read.length === 0) return null;
    return badRequest("the request line is malformed: " + quote(first), "send 'METHOD target HTTP/1.1'");
  }
  const method = first.slice(0, sp1);
  const target = first.slice(sp1 + 1, sp2);
  const proto = first.slice(sp2 + 1);
  if (method === "" || /[\x00-\x20\x7f-\uffff"(),/:;<=>?@[\\\]{}]/.test(method))
    return badRequest("the request method is malformed: " + quote(method), "send a method such as POST or GET");
  if (!/^HTTP\/[0-9]\.[0-9]$/.test(proto))
    return badRequest("the request line's HTTP version is malformed: " + quote(proto), "send 'METHOD target HTTP/1.1'");
  if (/%(?![0-9A-Fa-f]{2})/.test(target))
    return badRequest("the request target has malformed percent-encoding: " + quote(target), "percent-encode the path as RFC 3986 requires: '%' followed by two hexadecimal digits");
  const lengths: string[] = [];
  let hosts = 0;
  for (const l of lines.slice(1)) {
    const colon = l.indexOf(":");
    const name = colon < 0 ? "" : l.slice(0, colon);
    if (colon < 0 || name === "" || /[ \t]/.test(name)) return badRequest("a header line is malformed: " + quote(l), "send headers as 'Name: value'");
    const value = l.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (name.toLowerCase() === "content-length") lengths.push(value);
    if (name.toLowerCase() === "host") hosts++;
  }
  if (hosts > 1) return badRequest("the request has more than one Host header", "send one Host header");
  if (lengths.some((v) => v !== lengths[0]))
    return badRequest("the request has Content-Length headers that disagree: " + quote(lengths.join(", ")), "send one Content-Length");
  if (lengths.length > 0 && !/^[0-9]{1,18}$/.test(lengths[0]))
    return badRequest("Content-Length " + quote(lengths[0]) + " is not a non-negative decimal number", "send the body's length in bytes, or Transfer-Encoding: chunked");
  return null;
}

/**
 * The refusal of a request node:http parsed but the Go server refuses: a version other than
 * HTTP/1.x (a request line without one is HTTP/0.9 to node:http), more than one Host header, or
 * an HTTP/1.1 request without one. rawHeaders are the request's header names and values.
 */
export function requestRefusal(method: string, url: string, major: number, minor: number, rawHeaders: string[]): Refusal | null {
  if (major === 0 && minor === 9) return badRequest("the request line is malformed: " + quote(`${method} ${url}`), "send 'METHOD target HTTP/1.1'");
  if (major !== 1)
    return { status: 505, code: "HTTP_VERSION_NOT_SUPPORTED", message: "the request's HTTP version is not supported", hint: "send HTTP/1.1 (or HTTP/1.0)" };
  let hosts = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === "host") hosts++;
  if (hosts > 1) return badRequest("the request has more than one Host header", "send one Host header");
  if (hosts === 0 && minor >= 1) return badRequest("the request could not be parsed: missing required Host header", "check the request line and headers");
  return null;
}
