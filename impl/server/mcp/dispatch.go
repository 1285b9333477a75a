package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sdods/sdods/impl/server/httpapi"
)

// maxToolResponse caps what one tool call reads from the operation it dispatches.
const maxToolResponse = 16 << 20

// recorder is the response writer of an in-process request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len()+len(b) > maxToolResponse {
		r.over = true
		return 0, fmt.Errorf("tool response exceeds %d bytes", maxToolResponse)
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}

// call is what the MCP request carries into its tool calls: the credential to present again and
// the client's toolset selection.
type call struct {
	authorization string
	remoteAddr    string
	forwardedFor  string
	userAgent     string
	host          string
	requestID     string
	toolsets      map[string]bool // nil: every toolset
	method        string          // the JSON-RPC method of the POST
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// request builds the REST request of a tool call from its arguments.
func (t *opTool) request(ctx context.Context, c *call, args map[string]any) (*http.Request, error) {
	known := map[string]bool{}
	path := t.op.Path
	query := url.Values{}
	headers := http.Header{}
	for _, p := range t.params {
		known[p.name] = true
		v, ok := args[p.name]
		if !ok || v == nil {
			if p.in == "path" {
				return nil, fmt.Errorf("argument %s is required", p.name)
			}
			continue
		}
		switch p.in {
		case "path":
			s, err := scalar(v)
			if err != nil {
				return nil, fmt.Errorf("argument %s: %w", p.name, err)
			}
			if p.wildcard {
				segs := strings.Split(s, "/")
				for i, seg := range segs {
					segs[i] = url.PathEscape(seg)
				}
				s = strings.Join(segs, "/")
			} else {
				s = url.PathEscape(s)
			}
			path = strings.Replace(path, "{"+p.name+"}", s, 1)
		case "query":
			if list, ok := v.([]any); ok {
				for _, e := range list {
					s, err := scalar(e)
					if err != nil {
						return nil, fmt.Errorf("argument %s: %w", p.name, err)
					}
					query.Add(p.name, s)
				}
				continue
			}
			s, err := scalar(v)
			if err != nil {
				return nil, fmt.Errorf("argument %s: %w", p.name, err)
			}
			query.Set(p.name, s)
		case "header":
			s, err := scalar(v)
			if err != nil {
				return nil, fmt.Errorf("argument %s: %w", p.name, err)
			}
			headers.Set(p.name, s)
		}
	}
	var body []byte
	if t.hasBody {
		known["body"] = true
		if v, ok := args["body"]; ok {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("argument body: %w", err)
			}
			body = b
		}
	}
	var unknown []string
	for k := range args {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown argument %s: see the tool's input schema", strings.Join(unknown, ", "))
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(httpapi.WithVia(ctx, "mcp"), t.op.Method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header = headers
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Body = http.NoBody
		req.ContentLength = 0
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", c.authorization)
	if c.requestID != "" {
		req.Header.Set("X-Request-Id", c.requestID)
	}
	// The client's address as the pipeline resolves it (a trusted proxy's X-Forwarded-For).
	if xff := c.forwardedFor; xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	req.RemoteAddr = c.remoteAddr
	req.Host = c.host
	req.RequestURI = target
	return req, nil
}

// scalar renders a parameter value as the text of a path, query or header parameter.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.Number:
		return x.String(), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("must be a string, number or boolean")
}

// result turns the REST response of a tool call into the tool's result: the JSON body as text
// and, for a tool with an output schema, as structured content; an image as image content; a
// refusal or failure (4xx, 5xx) as an error result carrying the API's error body unchanged.
func (t *opTool) result(rec *recorder) *mcp.CallToolResult {
	res := t.content(rec)
	res.Meta = mcp.NewMetaFromMap(map[string]any{StatusMeta: rec.statusCode()})
	return res
}

// StatusMeta is the key of a tool result's _meta that carries the HTTP status of the REST
// request the tool made.
const StatusMeta = "sdods/httpStatus"

func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (t *opTool) content(rec *recorder) *mcp.CallToolResult {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if rec.over {
		return mcp.NewToolResultError(fmt.Sprintf("the response exceeds %d bytes; fetch it over the REST API (%s %s)", maxToolResponse, t.op.Method, t.op.Path))
	}
	ct, _, _ := mime.ParseMediaType(rec.header.Get("Content-Type"))
	body := rec.body.Bytes()
	if status >= 400 {
		text := string(body)
		if text == "" {
			text = fmt.Sprintf(`{"error":{"code":"http_%d","message":%q,"hint":""}}`, status, http.StatusText(status))
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent(text)}}
	}
	switch {
	case len(body) == 0:
		return mcp.NewToolResultText(fmt.Sprintf("done: %d %s", status, http.StatusText(status)))
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(body))}}
		if t.hasOutput {
			var obj map[string]any
			if json.Unmarshal(body, &obj) == nil {
				res.StructuredContent = obj
			}
		}
		return res
	case strings.HasPrefix(ct, "image/"):
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(base64.StdEncoding.EncodeToString(body), ct)}}
	case strings.HasPrefix(ct, "text/") || ct == "application/xml" || ct == "application/x-ndjson":
		return mcp.NewToolResultText(string(body))
	default:
		uri := "sdods:" + t.op.Path
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: uri, MIMEType: ct, Blob: base64.StdEncoding.EncodeToString(body)})}}
	}
}
