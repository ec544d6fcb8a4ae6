package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool mechanism, apart from the inventory (tools.go): what a tool is
// (its definition, its cost, its registration), how its input schema is
// made and bounded, its annotations, and the words descriptions share.

// tool pairs a tool's definition with the function that registers its
// handler on a server.
type tool struct {
	def *sdk.Tool
	// cost says when a call is heavy and goes through the admission
	// gate; every tool states it (register refuses one without).
	cost     costFn
	register func(s *sdk.Server, d *Deps, def *sdk.Tool, cost costFn)
}

func ptr[T any](v T) *T { return &v }

// readOnly are the annotations of every tool in this inventory. They are
// set explicitly: go-sdk omits nil hints, and the spec's defaults for
// openWorld and destructive are true.
func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
}

// register installs a tool with go-sdk's raw handler: instrument decodes
// and checks the arguments against def's input schema itself and puts a
// heavy call through the admission gate (the tool's cost, which every
// tool must state). No output schema is declared: MCP allows structuredContent
// without one, and the schemas cost more than the descriptions in every
// tools/list (a client pays them on every connection) while telling a
// model, which reads the text content, nothing it uses.
func register[In, Out any](fn func(ctx context.Context, d *Deps, in In) (Out, callInfo, error)) func(*sdk.Server, *Deps, *sdk.Tool, costFn) {
	return func(s *sdk.Server, d *Deps, def *sdk.Tool, cost costFn) {
		name := def.Name
		if cost == nil {
			panic(fmt.Sprintf("tool %s states no cost: it is not classified heavy or cheap", name))
		}
		t := *def
		in := def.InputSchema.(*jsonschema.Schema)
		// Served as its JSON, made once: on the stateless lane go-sdk
		// re-marshals the input schema of every tools/call (looking for
		// x-mcp-header annotations), which for a *jsonschema.Schema is a
		// reflective encoding of every property: tens of µs a call
		// (bench/mcp/INVESTIGATION.md).
		raw, err := json.Marshal(in)
		if err != nil {
			panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
		}
		t.InputSchema = json.RawMessage(raw)
		s.AddTool(&t, instrument(d, name, cost, newArgDecoder[In](in), fn))
	}
}

// Input types: field descriptions become the schema's. Each tool's
// types, definition and handler are in its own file.

// sizeText is n bytes as a description states it: in KiB, MiB or GiB
// when that is exact.
func sizeText[T int | int64](n T) string {
	for _, u := range []struct {
		unit T
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.unit && n%u.unit == 0 {
			return fmt.Sprintf("%d %s", n/u.unit, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// bounds sets minimum, maximum and default of integer properties.
type bound struct {
	min, max, def int
}

func inputSchema[In any](bounds map[string]bound) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(err)
	}
	// additionalProperties: false tells a model nothing it acts on (it
	// sends the properties listed) and costs 28 bytes per tool in every
	// tools/list; the argument decoder refuses unknown properties all
	// the same.
	s.AdditionalProperties = nil
	// jsonschema-go types a pointer or slice field as ["null", T]: a model
	// reads that as "send null". Absent means the default here, and null
	// is refused, so every property has its plain type.
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	for name, b := range bounds {
		p := s.Properties[name]
		if p == nil {
			panic("no property " + name)
		}
		p.Minimum = ptr(float64(b.min))
		p.Maximum = ptr(float64(b.max))
		p.Default = json.RawMessage(fmt.Sprint(b.def))
	}
	return s
}

// change are the annotations of a write tool: destructive when content
// can be lost. Retrying a call is safe (idempotent): every change is
// guarded by a revision or refuses an existing destination, so a repeat
// fails without effect.
func change(title string, destructive bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: false, IdempotentHint: true, DestructiveHint: ptr(destructive), OpenWorldHint: ptr(false)}
}

// workdirHeader is the x-mcp-header name of every tool's workdir argument
// when the operator turns it on (SERVERFS_MCP_PARAM_HEADERS=true): on the
// 2026-07-28 HTTP lane a client then sends the alias a call works on as
// Mcp-Param-Workdir too, so a gateway in front of ServerFS can route,
// audit or rate-limit by workdir without parsing JSON-RPC bodies. go-sdk's
// stateless handler checks the header against the body (absent, different
// or badly Base64-encoded while the argument is there: HTTP 400 with
// -32020 HeaderMismatch). Off by default: a client that calls a tool it
// has not listed (it reuses a known list, or calls by name) cannot know
// to send the header, and go-sdk refuses its every call; nothing in
// ServerFS's own deployments routes on it. Clients of older revisions
// and of stdio ignore the annotation.
const workdirHeader = "Workdir"

// mirrorWorkdir annotates def's top-level string property workdir, if it
// has one, with x-mcp-header (SEP-2243).
func mirrorWorkdir(def *sdk.Tool) {
	s, ok := def.InputSchema.(*jsonschema.Schema)
	if !ok || s == nil {
		return
	}
	if p := s.Properties["workdir"]; p != nil && p.Type == "string" {
		if p.Extra == nil {
			p.Extra = map[string]any{}
		}
		p.Extra["x-mcp-header"] = workdirHeader
	}
}

// costFn reports whether a call with these (decoded) arguments is heavy.
type costFn func(d *Deps, in any) bool

func cheap(*Deps, any) bool { return false }

func heavy(*Deps, any) bool { return true }

// heavyIf is a costFn on a tool's own input type.
func heavyIf[In any](f func(d *Deps, in In) bool) costFn {
	return func(d *Deps, in any) bool { return f(d, in.(In)) }
}
