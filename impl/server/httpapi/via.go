package httpapi

import "context"

type viaKey struct{}

// WithVia marks a request made on a client's behalf by another front end of the server (the MCP
// endpoint dispatching a tool call): its audit entries say so in their detail ("via").
func WithVia(ctx context.Context, via string) context.Context {
	return context.WithValue(ctx, viaKey{}, via)
}

func viaFrom(ctx context.Context) string {
	v, _ := ctx.Value(viaKey{}).(string)
	return v
}
